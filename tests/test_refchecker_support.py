"""The claim support model: readings, the facts that decide alone, fitting, saving, the answer."""

import json
import math

import pytest

from truthguard.refchecker.support import (
    CLAIM_FEATURES,
    FACT_P,
    SupportModel,
    answer_probability,
    claim_features,
    fact_unsupported,
    says_nothing_stated,
)


def _issue(kind, relation, text="x"):
    return {"kind": kind, "relation": relation, "text": text}


def test_claim_features_read_the_grounding():
    numbers = {"precision": 0.7, "cosine": 0.6, "soft": {"pitched": 0.45, "mainly": 0.6},
               "n_content": 4, "copied": 0.25}  # fmt: skip
    issues = [
        _issue("number", "ungrounded", "1999"),
        _issue("name", "ungrounded", "Hale"),
        _issue("name", "other_value", "Bloom"),
        _issue("content", "ungrounded", "pitched"),
    ]
    f = claim_features(numbers, issues)
    assert set(f) == set(CLAIM_FEATURES)
    assert f["numbers_missing"] == pytest.approx(math.log1p(1))
    assert f["names_missing"] == pytest.approx(math.log1p(2))
    assert f["conflict"] == 0.0 and f["min_soft"] == 0.45
    assert f["content_missing"] == pytest.approx(0.25)
    assert claim_features({}, [])["min_soft"] == 1.0  # every word found as a word


@pytest.mark.parametrize(
    ("issues", "why"),
    [
        ([_issue("number", "conflict")], "conflict"),
        ([_issue("content", "opposite")], "conflict"),
        ([_issue("name", "swapped")], "conflict"),
        ([_issue("content", "of_another", "American")], "conflict"),
        ([_issue("number", "other_value")], "conflict"),
        ([_issue("number", "ungrounded", "1999")], "number"),
        ([_issue("name", "ungrounded", "Hale")], "name"),
        # a people's adjective or a short acronym is often worded otherwise: left to the model
        ([_issue("name", "ungrounded", "British")], None),
        ([_issue("name", "ungrounded", "TV")], None),
        ([_issue("content", "ungrounded", "pitched")], None),
        # a restatement of the question that adds nothing the sources state
        ([_issue("content", "unanswered", "historical person")], "unanswered"),
        ([_issue("number", "conflict"), _issue("content", "unanswered")], "conflict"),
        # two missing name words side by side are one name, however each word ends
        (
            [
                {
                    "kind": "name",
                    "relation": "ungrounded",
                    "text": "Pacific",
                    "start": 4,
                    "end": 11,
                },
                {"kind": "name", "relation": "ungrounded", "text": "Ocean", "start": 12, "end": 17},
            ],
            "name",
        ),
        (
            [
                {"kind": "name", "relation": "ungrounded", "text": "British", "start": 0, "end": 7},
                {
                    "kind": "name",
                    "relation": "ungrounded",
                    "text": "Korean",
                    "start": 20,
                    "end": 26,
                },
            ],
            None,
        ),
        ([], None),
    ],
)
def test_the_facts_that_leave_a_claim_unsupported_on_their_own(issues, why):
    assert fact_unsupported(issues) == why


def _rows():
    # supported claims: words found; unsupported: a low match and a missing name
    good = {"numbers_missing": 0.0, "names_missing": 0.0, "conflict": 0.0, "precision": 0.9,
            "cosine": 0.8, "content_missing": 0.0, "min_soft": 0.8, "copied": 0.5,
            "foreign_nouns": 0.0}  # fmt: skip
    bad = {**good, "names_missing": math.log1p(1), "precision": 0.5, "cosine": 0.4,
           "content_missing": 0.5, "min_soft": 0.2, "foreign_nouns": math.log1p(1)}  # fmt: skip
    rows, ys = [], []
    for k in range(20):
        rows += [{**good, "copied": 0.4 + k / 100}, {**bad, "copied": 0.3 + k / 100}]
        ys += [False, True]
    return rows, ys


def test_the_model_fits_saves_and_loads(tmp_path):
    rows, ys = _rows()
    model = SupportModel.fit(rows, ys, claim_threshold=0.6, answer_threshold=0.6, fitted_on="t")
    assert model.probability(rows[1]) > 0.9 > 0.1 > model.probability(rows[0])
    path = tmp_path / "support.json"
    model.save(path)
    assert SupportModel.load(path) == model
    assert json.loads(path.read_text())["claim_threshold"] == 0.6


def test_fitting_needs_both_kinds_and_every_feature():
    rows, ys = _rows()
    with pytest.raises(ValueError, match="both"):
        SupportModel.fit(rows[:1], ys[:1])
    with pytest.raises(ValueError, match="missing features"):
        SupportModel(coefficients={}, means={}, scales={}, intercept=0.0)


def test_the_packaged_model_is_fitted_and_cut_between_its_classes():
    model = SupportModel.default()
    assert 0.5 < model.answer_threshold < 0.95
    assert "claims_synth" in model.fitted_on


def test_an_answer_is_as_supported_as_its_least_supported_fact_claim():
    claims = [
        {"kind": "fact", "checker_output": json.dumps({"p_unsupported": 0.2})},
        {"kind": "hedge", "checker_output": json.dumps({"p_unsupported": 0.99})},
        {"kind": "fact", "checker_output": json.dumps({"p_unsupported": 0.7})},
    ]
    assert answer_probability(claims) == (0.7, 2)
    # another checker's claims (no support model reading): no answer probability
    assert answer_probability([{"kind": "fact", "checker_output": "Entailment"}]) is None


def test_an_answer_of_remarks_only_is_decided_by_what_they_name():
    def remark(*issues: tuple[str, str]) -> dict:
        return {
            "kind": "hedge",
            "mode": "grounding",
            "issues": [{"kind": k, "relation": r, "text": "x"} for k, r in issues],
        }

    # the remark's own "doesn't" is about the passage; nothing else is found wrong
    assert answer_probability([remark(("negation", "conflict"))]) == (0.0, 0)
    # a count of the answerer's own ("that one day") leaves even odds, under any cut
    assert answer_probability([remark(), remark(("number", "ungrounded"))]) == (0.5, 1)
    # a value set against the evidence's own decides as it would in a fact
    assert answer_probability([remark(("name", "conflict"))]) == (FACT_P, 0)
    # beside a fact claim, remarks decide nothing
    fact = {"kind": "fact", "checker_output": json.dumps({"p_unsupported": 0.3})}
    assert answer_probability([remark(("name", "conflict")), fact]) == (0.3, 1)


def test_a_place_ending_like_a_peoples_adjective_is_a_name_the_sources_must_state():
    from truthguard.refchecker.support import fact_unsupported

    claim = "Dubai is in Oman."
    oman = {"kind": "name", "relation": "ungrounded", "text": "Oman", "start": 12, "end": 16}
    assert fact_unsupported([oman], claim) == "name"
    # a people's adjective before its noun is still left to the model ("a German company")
    claim = "It is a German company."
    german = {"kind": "name", "relation": "ungrounded", "text": "German", "start": 8, "end": 14}
    assert fact_unsupported([german], claim) is None


@pytest.mark.parametrize(
    ("claim", "word", "decides"),
    [
        # a person's or a thing's name that ends like a people's adjective ("-i", "-ic", "-an")
        ("The lead role went to Marek Kowalski, who voiced Tumi in the film.", "Tumi", True),
        ("The shop was opened by Eric in 1998.", "Eric", True),
        ("The car was built by Maserati.", "Maserati", True),
        # the same endings before a noun, and words in "-ish", "-ese" or "-ian", are left to
        # the model wherever they stand
        ("She ordered Thai food.", "Thai", False),
        ("The firm hired a Pakistani engineer.", "Pakistani", False),
        ("He is Danish.", "Danish", False),
        ("The Brazilian won the race.", "Brazilian", False),
    ],
)
def test_a_word_ending_like_a_peoples_adjective_is_read_as_a_name_by_where_it_stands(
    claim, word, decides
):
    from truthguard.refchecker.support import fact_unsupported

    start = claim.index(word)
    issue = {
        "kind": "name",
        "relation": "ungrounded",
        "text": word,
        "start": start,
        "end": start + len(word),
    }
    assert (fact_unsupported([issue], claim) == "name") is decides


def test_a_claim_says_nothing_stated_when_no_source_states_any_of_its_words():
    ballet = [_issue("content", "ungrounded", "ballet")]
    assert says_nothing_stated({"n_content": 1}, ballet)
    # one word of two stated, or no words besides its names: something is said, or nothing
    assert not says_nothing_stated({"n_content": 2}, ballet)
    assert not says_nothing_stated({"n_content": 0}, [])
    # a name no source states is no word of the claim's own
    assert not says_nothing_stated({"n_content": 1}, [_issue("name", "ungrounded", "Orff")])
