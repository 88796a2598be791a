"""The calibrated answer-level decision: features from claims, the logistic model, its file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from truthguard.refchecker.decision import FEATURES, GroundingDecision, answer_features


def _claim(label, issues=(), precision=1.0, cosine=0.8, n_facts=1, n_content=4):
    raw = {"precision": precision, "cosine": cosine, "n_facts": n_facts, "n_content": n_content}
    return {"label": label, "issues": [dict(i) for i in issues], "checker_output": json.dumps(raw)}


def test_features_summarise_the_claims():
    claims = [
        _claim("Entailment"),
        _claim(
            "Contradiction",
            [{"kind": "number", "relation": "conflict"}, {"kind": "content", "relation": "u"}],
            precision=0.5,
            cosine=0.4,
            n_facts=2,
        ),
    ]
    f = answer_features(claims)
    assert f is not None and set(f) == set(FEATURES)
    assert f["entailed"] == 0.5 and f["contradicted"] == 0.5 and f["any_contradiction"] == 1.0
    assert f["facts_missing"] == pytest.approx(1 / 3)
    assert f["numbers_missing"] == pytest.approx(math.log1p(1)) and f["names_missing"] == 0.0
    assert f["content_missing"] == pytest.approx(1 / 8)
    assert f["min_precision"] == 0.5 and f["mean_cosine"] == pytest.approx(0.6)


def test_features_read_what_the_alignment_found_not_the_restatement_reading():
    word = {"kind": "content", "relation": "ungrounded"}
    restated = {"kind": "content", "relation": "unanswered"}
    alone = answer_features([_claim("Neutral", [word], precision=0.6)])
    both = answer_features([_claim("Neutral", [word, restated], precision=0.6)])
    assert alone == both


def test_no_features_without_claims_or_without_grounding_numbers():
    assert answer_features([]) is None
    llm_labelled = [{"label": "Entailment", "issues": [], "checker_output": "Entailment"}]
    assert answer_features(llm_labelled) is None


def test_fit_separates_the_classes_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    rows, gold = [], []
    for _ in range(200):
        bad = bool(rng.integers(0, 2))
        f = {name: float(rng.normal(0.0, 0.1)) for name in FEATURES}
        f["facts_missing"] += 1.0 if bad else 0.0
        rows.append(f)
        gold.append(bad)
    d = GroundingDecision.fit(rows, gold, threshold=0.4, fitted_on="synthetic")
    assert d.coefficients["facts_missing"] > 1.0
    probs = [d.probability(f) for f in rows]
    assert all((p >= 0.5) == g for p, g in zip(probs, gold, strict=True))
    d.save(tmp_path / "d.json")
    again = GroundingDecision.load(tmp_path / "d.json")
    assert again == d and again.threshold == 0.4


def test_fit_refuses_a_single_class():
    with pytest.raises(ValueError, match="both"):
        GroundingDecision.fit([dict.fromkeys(FEATURES, 0.0)] * 3, [True, True, True])


def test_the_packaged_decision_is_complete_and_small():
    d = GroundingDecision.default()
    assert set(d.coefficients) == set(FEATURES) and 0.0 < d.threshold < 1.0
    assert "HaluEval" in d.fitted_on
    assert set(d.forms) == {"passage"}  # answers and chat replies: the shared model
    assert all(set(m.coefficients) == set(FEATURES) for m in d.forms.values())
    assert len(d.model_dump_json()) < 16_384


def test_a_decision_names_what_is_missing_or_not_finite():
    zeros = dict.fromkeys(FEATURES, 0.0)
    with pytest.raises(ValidationError, match="missing features"):
        GroundingDecision(coefficients={}, means=zeros, scales=zeros, intercept=0.0)
    with pytest.raises(ValidationError, match="finite"):
        GroundingDecision(
            coefficients={**zeros, "entailed": float("nan")}, means=zeros, scales=zeros, intercept=0
        )
    with pytest.raises(ValidationError):
        GroundingDecision(coefficients=zeros, means=zeros, scales=zeros, intercept=0, threshold=1.5)


def _said(text, label, issues, n_facts, **numbers):
    out = {
        "claim": text,
        "label": label,
        "checker_output": json.dumps({"n_facts": n_facts, "precision": 1.0, **numbers}),
        "issues": [
            {"kind": k, "relation": "ungrounded", "text": t, "claim_start": text.find(t)}
            for k, t in issues
        ],
    }
    return out


def test_a_claim_whose_names_and_numbers_are_all_missing_is_invented():
    from truthguard.refchecker.decision import invented

    made_up = _said("Robin Lee.", "Neutral", [("name", "Robin"), ("name", "Lee")], 2)
    assert invented(made_up)
    # one of its names is grounded: not invented (the model weighs it)
    half = _said("Tom Hanks met Robin Lee.", "Neutral", [("name", "Robin"), ("name", "Lee")], 4)
    assert not invented(half)
    # who said it, and a hedged figure, are not what the claim asserts about the world
    byline = "Salil Shetty: Countries that use executions are on the wrong side of history."
    assert not invented(_said(byline, "Neutral", [("name", "Salil"), ("name", "Shetty")], 2))
    hedged = "The penalty is more than 10 times the previous record."
    assert not invented(_said(hedged, "Neutral", [("number", "10")], 1))
    assert invented(_said("The penalty is 10 times the record.", "Neutral", [("number", "10")], 1))
    assert not invented(_said("The film was loved.", "Neutral", [], 0))
    # without names or numbers: of three or more words, all but its subject missing
    gold = _said(
        "Mars has a ring of solid gold.",
        "Neutral",
        [("content", "ring"), ("content", "solid"), ("content", "gold")],
        0,
        n_content=4,
    )
    assert invented(gold)
    rock = _said(
        "Mars has moons of solid rock.", "Neutral", [("content", "solid"), ("content", "rock")], 0
    )
    rock["checker_output"] = json.dumps({"n_facts": 0, "precision": 0.6, "n_content": 4})
    assert not invented(rock)


def test_rules_decide_before_the_model():
    from truthguard.refchecker.decision import decided_by_claims

    d = GroundingDecision.default().model_copy(
        update={
            "invented": True,
            "retelling_copied": 0.7,
            "strict_claims": 1,
            "retelling_sentences": 0,
        }
    )
    ok = _said("Bi Sheng made type.", "Entailment", [], 1)
    made_up = _said("Robin Lee.", "Neutral", [("name", "Robin"), ("name", "Lee")], 2)
    assert decided_by_claims([ok, made_up], chat=False, decision=d)[:2] == (True, "invented")
    # in a chat the history may hold what the reply builds on: the model weighs it
    assert decided_by_claims([ok, made_up], chat=True, decision=d) is None
    # a near-copy of its evidence sentence with a name the evidence lacks decides; a near-copy
    # with a word of its own is left to the model (summaries reword what they copy)
    copied = _said("No. 17 protects him with a wall.", "Neutral", [("content", "wall")], 1)
    copied["checker_output"] = json.dumps({"n_facts": 1, "precision": 0.8, "copied": 0.85})
    assert decided_by_claims([ok, copied], chat=False, decision=d) is None
    copied = _said("Goku protects him with a barrier.", "Neutral", [("name", "Goku")], 1)
    copied["checker_output"] = json.dumps({"n_facts": 2, "precision": 1.0, "copied": 0.85})
    assert decided_by_claims([ok, copied], chat=False, decision=d)[:2] == (True, "claim")
    assert decided_by_claims([ok, ok], chat=False, decision=d) == (False, "all_entailed", None)
    assert decided_by_claims([made_up], chat=False, decision=d)[1] == "short_answer"


def test_a_short_opening_answer_not_entailed_decides_outside_a_chat():
    from truthguard.refchecker.decision import decided_by_claims, leading_answer

    d = GroundingDecision.default().model_copy(update={"lead_words": 6, "invented": False})
    explained = _said(
        "The retina is the innermost, light-sensitive layer of tissue of the eye.",
        "Entailment",
        [],
        0,
    )
    wrong = _said("The vascular layer of the eye.", "Neutral", [("content", "vascular")], 0)
    assert leading_answer([wrong, explained], 6) is wrong
    assert decided_by_claims([wrong, explained], chat=False, decision=d)[:2] == (
        True,
        "lead_answer",
    )
    # entailed, in a chat, longer than the limit, or the rule off: the model weighs the answer
    right = _said("The innermost layer of the eye.", "Entailment", [], 0)
    assert decided_by_claims([right, explained], chat=False, decision=d) == (
        False,
        "all_entailed",
        None,
    )
    assert decided_by_claims([wrong, explained], chat=True, decision=d) is None
    assert leading_answer([wrong, explained], 5) is None
    off = d.model_copy(update={"lead_words": 0})
    assert decided_by_claims([wrong, explained], chat=False, decision=off) is None
    # a clause cut from a longer sentence, talk around facts, or an answer of one claim
    clause = _said("The layer is vascular", "Neutral", [("content", "vascular")], 0)
    assert leading_answer([clause, explained], 6) is None
    opinion = {**wrong, "kind": "opinion"}
    assert leading_answer([opinion, explained], 6) is None
    assert leading_answer([wrong], 6) is None


def test_a_short_opening_answer_with_an_unsupported_name_or_number_decides_in_a_chat_too():
    from truthguard.refchecker.decision import decided_by_claims

    d = GroundingDecision.default().model_copy(update={"lead_words": 6, "invented": False})
    assert d.lead_in_chat  # the packaged decision
    explained = _said(
        "The Great Pyramid was built for a pharaoh of the Fourth Dynasty.", "Entailment", [], 0
    )
    for wrong in (
        _said("Sneferu built it.", "Neutral", [("name", "Sneferu")], 1),
        _said("It was finished in 2490 BC.", "Neutral", [("number", "2490")], 1),
    ):
        assert decided_by_claims([wrong, explained], chat=True, decision=d)[:2] == (
            True,
            "lead_answer",
        )
        off = d.model_copy(update={"lead_in_chat": False})
        assert decided_by_claims([wrong, explained], chat=True, decision=off) is None
        assert decided_by_claims([wrong, explained], chat=False, decision=off)[1] == "lead_answer"
    # a remark or a loose label whose names are all supported is left to the model in a chat
    label = _said("Get Real is a drama.", "Neutral", [("content", "drama")], 1)
    remark = _said("That is cool.", "Neutral", [("content", "cool")], 0)
    for lead in (label, remark):
        assert decided_by_claims([lead, explained], chat=True, decision=d) is None
        assert decided_by_claims([lead, explained], chat=False, decision=d)[1] == "lead_answer"
    # a decision saved before the option decides chat replies as it did
    saved = json.loads(d.model_dump_json())
    del saved["lead_in_chat"]
    assert not GroundingDecision.model_validate(saved).lead_in_chat


def test_a_chat_reply_without_a_model_of_its_own_is_weighed_with_the_chat_offset():
    d = GroundingDecision.default().model_copy(update={"chat_offset": 1.0, "forms": {}})
    f = dict.fromkeys(FEATURES, 0.0)
    p, p_chat = d.probability(f), d.probability(f, chat=True)
    assert math.isclose(math.log(p_chat / (1 - p_chat)) - math.log(p / (1 - p)), 1.0)
    assert d.probability(f, form="reply") == p_chat
    assert d.probability(f, form="passage") == p == d.probability(f, form="answer")


def _logit(p):
    return math.log(p / (1 - p))


def test_each_form_with_a_model_of_its_own_is_weighed_by_it():
    d = GroundingDecision.default()
    f = dict.fromkeys(FEATURES, 0.2) | {"entailed": 0.5, "names_missing": 1.0}
    assert d.probability(f) == d.probability(f, form="answer")
    assert _logit(d.probability(f)) == pytest.approx(d.logit(f))
    assert _logit(d.probability(f, form="passage")) == pytest.approx(d.forms["passage"].logit(f))
    # a form without a model of its own: the shared model (a reply moved by the chat offset)
    assert _logit(d.probability(f, chat=True)) == pytest.approx(d.logit(f) + d.chat_offset)
    # the chat offset is not added to a reply's own model
    own = d.model_copy(update={"forms": {**d.forms, "reply": d.forms["passage"]}})
    assert own.probability(f, chat=True) == d.probability(f, form="passage")
    with pytest.raises(ValueError, match="form must be one of"):
        d.probability(f, form="essay")


def test_forms_are_named_and_saved_with_the_decision(tmp_path):
    d = GroundingDecision.default()
    d.save(tmp_path / "d.json")
    assert GroundingDecision.load(tmp_path / "d.json") == d
    data = json.loads(d.model_dump_json())
    data["forms"]["essay"] = data["forms"]["passage"]
    with pytest.raises(ValidationError, match="unknown forms"):
        GroundingDecision.model_validate(data)
    del data["forms"]["essay"]
    del data["forms"]["passage"]["coefficients"]["entailed"]
    with pytest.raises(ValidationError, match="missing features"):
        GroundingDecision.model_validate(data)
    # a decision saved before forms existed weighs every form with the shared model
    del data["forms"]
    assert GroundingDecision.model_validate(data).forms == {}


def test_the_form_of_an_answer():
    from truthguard.refchecker.decision import answer_form

    one = [_said("Bi Sheng made type.", "Entailment", [], 1)]
    two = [*one, _said("He lived in China.", "Entailment", [], 1)]
    sentence = "Bi Sheng, a commoner, made movable type in the 1040s."
    clauses = [dict(c, sentence=sentence) for c in two]
    assert answer_form(one, chat=False) == "answer"
    assert answer_form(two, chat=False) == "passage"
    assert answer_form(clauses, chat=False) == "answer"
    assert answer_form(one, chat=True) == answer_form(two, chat=True) == "reply"
    three = [*two, _said("He died in 1051.", "Entailment", [], 1)]
    assert answer_form(two, chat=False, passage_sentences=3) == "answer"
    assert answer_form(three, chat=False, passage_sentences=3) == "passage"
    assert GroundingDecision.default().passage_sentences == 3


def _conflicting(text, kind, issue_kind, label="Contradiction"):
    claim = _said(text, label, [], 1)
    claim["kind"] = kind
    claim["issues"] = [{"kind": issue_kind, "relation": "conflict", "text": "x"}]
    return claim


def test_a_question_or_greeting_denies_nothing_by_its_negation():
    from truthguard.refchecker.decision import retelling_deviation

    why = _conflicting(
        "So why doesn't the plan do more with nuclear power?", "question", "negation"
    )
    assert retelling_deviation([why], 1.01) is None
    assert retelling_deviation([_conflicting("No problem!", "greeting", "negation")], 1.01) is None
    # a name set against the evidence's still counts in a question, and a fact's negation does
    named = _conflicting("Did you see Tom Hanks in it?", "question", "name")
    assert retelling_deviation([named], 1.01) is named
    denied = _conflicting("The plan does not cover nuclear power.", "fact", "negation")
    assert retelling_deviation([why, denied], 1.01) is denied


def test_another_value_for_a_slot_the_evidence_fills_decides_in_a_chat_too():
    from truthguard.refchecker.decision import decided_by_claims

    d = GroundingDecision.default()
    assert d.other_value
    ok = _said("The Prestige is a film.", "Entailment", [], 1)
    other = _said("The Prestige stars Orlando Bloom.", "Neutral", [], 3)
    other["issues"] = [
        {"kind": "name", "relation": "other_value", "text": "Orlando", "claim_start": 19}
    ]
    for chat in (False, True):
        assert decided_by_claims([ok, other], chat=chat, decision=d)[:2] == (True, "other_value")
    off = d.model_copy(update={"other_value": False})
    assert decided_by_claims([ok, other], chat=True, decision=off) is None


def test_the_worst_claim_is_summarised_beside_the_shares():
    grounded = _claim("Entailment", n_facts=2, n_content=4)
    made_up = _claim(
        "Neutral",
        [
            {"kind": "name", "relation": "ungrounded"},
            {"kind": "content", "relation": "ungrounded"},
            {"kind": "content", "relation": "ungrounded"},
        ],
        n_facts=1,
        n_content=4,
    )
    f = answer_features([grounded, grounded, grounded, made_up])
    # one claim of four misses three of its five names and words
    assert f["worst_missing"] == pytest.approx(math.log1p(3))
    assert f["claims_half_missing"] == 0.25 and f["any_half_missing"] == 1.0
    # the same three missing spread over three claims leave each mostly grounded
    spread = _claim("Neutral", [{"kind": "content", "relation": "ungrounded"}], n_content=4)
    g = answer_features([grounded, spread, spread, spread])
    assert g["worst_missing"] == pytest.approx(math.log1p(1)) and g["any_half_missing"] == 0.0
    assert g["claims_half_missing"] == 0.0 and g["content_missing"] > f["content_missing"]


def test_a_decision_saved_before_the_worst_claim_features_decides_as_before(tmp_path):
    d = GroundingDecision.default()
    later = ("worst_missing", "claims_half_missing", "any_half_missing")
    old = json.loads(d.model_dump_json())
    for field in ("coefficients", "means", "scales"):
        for name in later:
            old[field].pop(name)
    (tmp_path / "old.json").write_text(json.dumps(old))
    loaded = GroundingDecision.load(tmp_path / "old.json")
    assert all(loaded.coefficients[n] == 0.0 and loaded.scales[n] == 1.0 for n in later)
    f = dict.fromkeys(FEATURES, 0.3) | dict.fromkeys(later, 5.0)
    without = {**loaded.coefficients}
    assert loaded.logit(f) == pytest.approx(
        loaded.model_copy(update={"coefficients": without}).logit(dict(f, worst_missing=0.0))
    )
    # but a feature the model has always had still has to be there
    del old["coefficients"]["entailed"]
    (tmp_path / "broken.json").write_text(json.dumps(old))
    with pytest.raises(ValidationError, match="missing features"):
        GroundingDecision.load(tmp_path / "broken.json")


def test_a_contradiction_decides_only_an_answer_of_few_sentences():
    from truthguard.refchecker.decision import answer_sentences, decided_by_claims

    d = GroundingDecision.default()
    n = d.retelling_sentences
    assert n >= 1
    ok = [_said(f"Bi Sheng made type {k}.", "Entailment", [], 1) for k in range(n + 1)]
    wrong = _conflicting("Bi Sheng made type in 1990.", "fact", "number")
    assert decided_by_claims([*ok[: n - 1], wrong], chat=False, decision=d)[:2] == (True, "claim")
    long_answer = [*ok[:n], wrong]
    assert answer_sentences(long_answer) == n + 1
    decided = decided_by_claims(long_answer, chat=False, decision=d)
    assert decided is None or decided[1] != "claim"
    everywhere = d.model_copy(update={"retelling_sentences": 0})
    assert decided_by_claims(long_answer, chat=False, decision=everywhere)[:2] == (True, "claim")
    # clauses cut from one sentence are one sentence: a retold sentence is decided by its error
    one = (
        "Faisalabad, Lyallpur until 2005, is a city in Pakistan, and the second-largest of Punjab."
    )
    clauses = [dict(c, sentence=one) for c in [*ok[:n], wrong]]
    assert answer_sentences(clauses) == 1
    assert decided_by_claims(clauses, chat=False, decision=d)[:2] == (True, "claim")


def test_a_claim_copied_word_for_word_with_one_fact_changed_decides_an_answer_of_any_length():
    from truthguard.refchecker.decision import decided_by_claims

    d = GroundingDecision.default()
    assert d.conflict_copied <= 1.0
    ok = [_said(f"Bi Sheng made type {k}.", "Entailment", [], 1) for k in range(5)]
    changed = _conflicting("Bi Sheng made type in 1990.", "fact", "number")
    changed["checker_output"] = json.dumps({"n_facts": 1, "precision": 1.0, "copied": 0.9})
    reworded = dict(changed, checker_output=json.dumps({"n_facts": 1, "copied": 0.5}))
    assert decided_by_claims([*ok, changed], chat=False, decision=d)[:2] == (True, "claim")
    assert decided_by_claims([*ok, changed], chat=True, decision=d)[:2] == (True, "claim")
    decided = decided_by_claims([*ok, reworded], chat=False, decision=d)
    assert decided is None or decided[1] != "claim"
    # a content word set against the sentence's, or a question, is no changed fact
    word = dict(changed, issues=[{"kind": "content", "relation": "conflict", "text": "x"}])
    question = dict(changed, kind="question")
    for claim in (word, question):
        decided = decided_by_claims([*ok, claim], chat=False, decision=d)
        assert decided is None or decided[1] != "claim"
    off = d.model_copy(update={"conflict_copied": 1.01})
    decided = decided_by_claims([*ok, changed], chat=False, decision=off)
    assert decided is None or decided[1] != "claim"
