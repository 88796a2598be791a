import numpy as np
import pytest

from truthguard.refchecker import RefChecker
from truthguard.refchecker.extractors import Claim
from truthguard.refchecker.remarks import RemarkModel, names_a_reader, read_remarks


def _separable(n: int = 40, width: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2 == 0
    x = rng.normal(size=(n, width))
    x[:, 0] += np.where(y, 3.0, -3.0)
    return x, y


def test_fit_learns_the_direction_that_separates_remarks_and_round_trips(tmp_path):
    x, y = _separable()
    model = RemarkModel.fit(x, y, threshold=0.7, fitted_on="toy")
    p = model.probabilities(x)
    assert (p[y] > 0.5).all() and (p[~y] < 0.5).all()
    assert model.dimension == 6 and model.threshold == 0.7
    model.save(tmp_path / "m.json")
    again = RemarkModel.load(tmp_path / "m.json")
    assert np.allclose(again.probabilities(x), p, atol=1e-5)


def test_fit_refuses_one_class_or_misaligned_rows():
    x, y = _separable()
    with pytest.raises(ValueError, match="both"):
        RemarkModel.fit(x, np.ones(len(x), dtype=bool))
    with pytest.raises(ValueError, match="one row per label"):
        RemarkModel.fit(x[:-1], y)


def test_the_packaged_model_reads_the_packaged_minilm():
    model = RemarkModel.default()
    assert model.dimension == 384
    assert 0.5 <= model.threshold < 1.0
    assert "remarks_a.jsonl" in model.fitted_on


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("The passage leaves unsaid who designed it.", True),
        ("I can't confirm whether that was McGovern too.", True),
        ("Beyond her stage name, the text tells us nothing about her.", True),
        ("Cersei says it to Eddard while Robert is away hunting.", False),
        ("The treaty never named a successor.", False),
        ("The article of the treaty was signed in 1921.", True),  # the model decides
        ("Article 672 of the Civil Code states that the court may allow it.", False),
        ("Its sources are in the Alps.", False),
    ],
)
def test_a_remark_names_the_sources_or_their_reader(sentence, names):
    assert names_a_reader(sentence) is names


def test_read_remarks_makes_hedges_of_facts_over_the_cut_that_name_a_reader():
    model = RemarkModel(weights=[1.0, 0.0], intercept=0.0, threshold=0.8)
    claims = [
        Claim(text="The passage is silent on his later career."),
        Claim(text="He retired to Lisbon in 1911."),
        Claim(text="Critics never named the painter."),  # over the cut, but about the world
        Claim(text="Do you like it?", kind="question"),
    ]
    vectors = np.array([[5.0, 0.0], [-5.0, 0.0], [5.0, 0.0], [5.0, 0.0]])
    out, p = read_remarks(claims, vectors, model)
    assert [c.kind for c in out] == ["hedge", "fact", "fact", "question"]
    assert p[0] > 0.99 and p[1] < 0.01 and p[3] is None
    # vectors of another embedding model leave every claim alone
    same, none = read_remarks(claims, np.ones((4, 3)), model)
    assert same == claims and none == [None] * 4


def test_a_clause_is_judged_a_remark_by_the_sentence_it_was_cut_from():
    model = RemarkModel(weights=[1.0], intercept=0.0, threshold=0.8)
    clause = Claim(
        text="but not how long the BBC kept broadcasting from it.",
        sentence="The passage describes the studios, but not how long the BBC kept broadcasting "
        "from it.",
    )
    out, _ = read_remarks([clause], np.array([[5.0]]), model)
    assert out[0].kind == "hedge"


def test_a_value_stated_to_the_user_is_a_fact_however_it_reads():
    model = RemarkModel(weights=[1.0], intercept=0.0, threshold=0.8)
    claims = [
        Claim(text="You can close the incident after 72 hours, so from 9am on Thursday."),
        Claim(text="You'd pay £1,077 a month on the fixed rate."),
        Claim(text="You would have to ask the council about that."),  # no value: a remark
        Claim(text="The passage doesn't give you the 72 hours."),  # names the source too
    ]
    out, _ = read_remarks(claims, np.full((4, 1), 5.0), model)
    assert [c.kind for c in out] == ["fact", "fact", "hedge", "hedge"]


INCIDENTS = [
    "An incident may be closed by the Incident Commander once service has been stable for 24 "
    "hours. Personal data breaches must be reported to the regulator within 72 hours."
]


def test_a_changed_value_told_to_the_user_is_checked(embedder):
    question = "Our outage was fixed at 9am on Monday. When can we close the incident?"
    wrong = (
        "You can close the incident once it has been stable for 72 hours, so from 9am on Thursday."
    )
    result = RefChecker().invoke({"question": question, "answer": wrong, "contexts": INCIDENTS})
    assert not result.passing, result.explanation
    kinds = [c["kind"] for c in result.details["claims"]]
    assert kinds == ["fact"], result.details["claims"]


REFS = ["The Varne Tunnel is 14.6 kilometres long and opened to rail traffic on 2 June 2004."]


@pytest.mark.parametrize(
    "answer",
    [
        "It opened to trains on 2 June 2004 and runs for 14.6 km. Who designed it, the passage "
        "leaves unsaid.",
        "It is 14.6 km long. What it cost and who built it, the excerpt never gets into.",
    ],
)
def test_remarks_in_words_no_rule_lists_pass_by_meaning(embedder, answer):
    ask = {"question": "Tell me about the Varne Tunnel.", "answer": answer, "references": REFS}
    result = RefChecker().invoke(ask)
    assert result.passing, result.explanation
    remarks = [c for c in result.details["skipped"] if c["kind"] == "hedge"]
    assert remarks, result.details["claims"]
    # the wording rules alone read the remark as a fact the passage does not state
    assert not RefChecker(remarks=False).invoke(ask).passing


def test_a_world_fact_in_a_remarks_words_is_still_checked(embedder):
    answer = "It opened in June 2004. The engineers never disclosed what the boring machines cost."
    result = RefChecker().invoke(
        {"question": "When did the Varne Tunnel open?", "answer": answer, "references": REFS}
    )
    assert not result.passing
    kinds = {c["claim"]: c["kind"] for c in result.details["claims"]}
    assert kinds.get("The engineers never disclosed what the boring machines cost.") == "fact"


def test_remarks_can_be_turned_off_or_given_as_a_file(tmp_path):
    model = RemarkModel(weights=[0.0] * 384, intercept=-5.0, threshold=0.9)
    model.save(tmp_path / "r.json")
    assert RefChecker(remarks=str(tmp_path / "r.json")).remarks == model
    assert RefChecker(remarks=False).remarks is False
    with pytest.raises(ValueError, match="no remark model file"):
        RefChecker(remarks=str(tmp_path / "missing.json"))


def test_remarks_are_read_only_from_the_packaged_minilm(tmp_path):
    from truthguard.refchecker.detector import _packaged_embedding
    from truthguard.similarity import EmbeddingSimilarity

    assert _packaged_embedding(EmbeddingSimilarity())
    assert not _packaged_embedding(EmbeddingSimilarity(model_path=tmp_path))
    assert not _packaged_embedding(object())
