"""Stage-3 matchers: the published rules and the robust matcher."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

import numpy as np
import pytest

from truthguard.errors import InvalidLLMOutput
from truthguard.llm import LLMSession
from truthguard.rv import PaperMatcher, RobustMatcher
from truthguard.similarity import SimilarityBackend
from truthguard.testing import ScriptedChatModel

paper = PaperMatcher()
robust = RobustMatcher()


# -- published rules ------------------------------------------------------------------------------


def test_paper_qg_is_a_case_folded_substring_without_the_parenthetical():
    assert paper.match("Carme (moon)", "carme.", variant="qg").matched
    assert paper.match("Hoy", "Hoyland", variant="qg").matched  # substring, not whole word
    assert not paper.match("Cnidocyte", "Nematocyst.", variant="qg").matched


def test_paper_em_full_match_claim_needs_the_entity():
    out = paper.match("Ailanthus", "Ailanthus genus meets 100% of the criteria.", variant="em")
    assert out.matched and out.method == "full-match claim"
    assert not paper.match("Ailanthus", "Toona is a perfect match.", variant="em").matched


def test_paper_em_short_entities_in_a_full_match_must_keep_their_case():
    assert paper.match("Flag", "The Flag matches all points.", variant="em").matched
    assert not paper.match(
        "Flag", "A national flag matches all points, 100%.", variant="em"
    ).matched


def test_paper_em_except_cancels_the_full_match_claim():
    text = "Ailanthus matches all requirements except number 2, so 70%."
    out = paper.match("Ailanthus", text, variant="em")
    assert not out.matched and out.percentage == 70.0 and out.method == "percentage"


def test_paper_em_uses_the_first_percentage_and_80_percent():
    assert paper.match("Toona", "Toona meets 80% of them.", variant="em").matched
    assert not paper.match("Toona", "Toona: 75%. Others: 95%.", variant="em").matched
    out = paper.match("Toona", "Toona fits.", variant="em")
    assert out.matched and out.percentage is None  # no percentage: the entity decides


# -- robust matcher -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity", "answer"),
    [
        ("Emperor Ōjin", "The entity is Emperor Ojin."),  # accents
        ("Rhea (bird)", "The rhea."),  # parenthetical, article, case
        ("Intercharacter interval", 'The term is "inter-character interval".'),  # hyphen
        ("Cnidocyte", "Cnidocytes."),  # plural
        ("National Hockey League", "The NHL."),  # acronym
        ("European Programme (ESPRIT)", "It was called ESPRIT."),  # acronym alias
        ("Maximilian II Emanuel", "It is Max Emanuel, Elector of Bavaria."),  # shorter name
        ("Samuel D. Waksal", "Sam Waksal."),
        ("Trofim Lysenko", "Lysenko."),  # surname alone, a proper noun
        ("Racing de Ferrol", "It is Racing Club de Ferrol."),  # longer name, all words kept
        ("Geoffrey Plantagenet, Count of Anjou", "Geoffrey V, Count of Anjou."),
    ],
)
def test_robust_accepts_surface_variants(entity, answer):
    out = robust.match_text(entity, answer, variant="qg")
    assert out.matched, out.reason


@pytest.mark.parametrize(
    ("entity", "answer"),
    [
        ("Big South Conference", "The Atlantic Coast Conference (ACC)."),  # other name words
        ("Dekker's algorithm", "Peterson's algorithm."),
        ("Washington County, Florida", "It is Chipley, Florida."),
        ("Tyropoeon Valley", "The Valley of the Kings."),  # name continues to the right
        ("Pioneer program", 'The program was called "Mariner."'),  # bare common noun
        ("Hoy", "Hoyland."),  # whole words only
    ],
)
def test_robust_rejects_other_entities(entity, answer):
    out = robust.match_text(entity, answer, variant="qg")
    assert not out.matched, out.reason


def test_partial_names_can_be_switched_off():
    strict = RobustMatcher(partial_names=False)
    assert not strict.match_text("Trofim Lysenko", "Lysenko.", variant="qg").matched
    assert strict.match_text("Trofim Lysenko", "Trofim Lysenko.", variant="qg").matched


def test_robust_em_reads_the_percentage_nearest_the_entity():
    text = "Toona would meet 60% of them, but Ailanthus meets 90% of the requirements."
    out = robust.match_text("Ailanthus", text, variant="em")
    assert out.matched and out.percentage == 90.0 and out.percentages == [60.0, 90.0]
    assert paper.match("Ailanthus", text, variant="em").percentage == 60.0  # the first one


def test_robust_em_reads_ratios_and_stated_full_matches():
    out = robust.match_text("Ailanthus", "Ailanthus meets 7 out of 10 requirements.", variant="em")
    assert not out.matched and out.percentage == 70.0
    out = robust.match_text("Ailanthus", "Ailanthus meets all the requirements.", variant="em")
    assert out.matched and out.percentage == 100.0
    out = robust.match_text("Ailanthus", "Ailanthus does not meet all the criteria.", variant="em")
    assert out.matched and out.percentage is None  # negated claim: no percentage, entity decides


def test_robust_em_without_percentage_keeps_the_entity_verdict():
    out = robust.match_text("Ailanthus", "The entity is 'Ailanthus'.", variant="em")
    assert out.matched and out.percentage is None and "no percentage" in out.reason


def test_hedged_answer_without_the_entity_is_a_miss():
    out = robust.match_text("Carme (moon)", "I'm not sure which moon that is.", variant="qg")
    assert not out.matched and out.hedged and "declines" in out.reason


def test_hedged_answer_that_names_the_entity_is_flagged_but_matches():
    out = robust.match_text("Carme (moon)", "I'm not sure, but possibly Carme.", variant="qg")
    assert out.matched and out.hedged


class _FixedSimilarity(SimilarityBackend):
    """Scores every pair with one value."""

    def __init__(self, value: float) -> None:
        self.value = value
        self.calls = 0

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.full((len(a), len(b)), self.value, dtype=np.float32)


def _amatch(matcher, entity, answer, variant="qg"):
    return asyncio.run(matcher.amatch(entity, answer, variant=variant, session=LLMSession()))


def test_similarity_is_consulted_only_when_no_lexical_rule_fires():
    sim = _FixedSimilarity(0.9)
    matcher = RobustMatcher(similarity=sim)
    assert _amatch(matcher, "Ailanthus", "Ailanthus.").method == "normalized"
    assert sim.calls == 0
    out = _amatch(matcher, "Tree of heaven", "Ailanthus altissima.")
    assert out.matched and out.method == "similarity" and out.similarity == pytest.approx(0.9)
    low = _amatch(RobustMatcher(similarity=_FixedSimilarity(0.2)), "Tree of heaven", "A pine.")
    assert not low.matched and low.similarity == pytest.approx(0.2)


def test_judge_is_the_last_resort_and_its_reply_is_kept():
    judge = ScriptedChatModel(script=["Yes."])
    out = _amatch(RobustMatcher(judge=judge), "Maximilian II Emanuel", "The Blue Elector.")
    assert out.matched and out.method == "judge" and out.judge_output == "Yes."
    assert "Maximilian II Emanuel" in judge.calls[0]
    _amatch(RobustMatcher(judge=judge), "Ailanthus", "Ailanthus.")
    assert judge.call_count == 1  # lexical match: no judge call


def test_garbage_from_the_judge_raises_invalid_output():
    judge = ScriptedChatModel(script=["Hard to say."])
    with pytest.raises(InvalidLLMOutput) as e:
        _amatch(RobustMatcher(judge=judge), "Ailanthus", "Toona.")
    assert e.value.stage == "rv.judge" and e.value.raw == "Hard to say."


# -- percentages that cannot be shares, long answers ----------------------------------------------


@pytest.mark.parametrize(
    "answer",
    ["Ailanthus meets 150% of the points.", "Ailanthus: -90%.", "Ailanthus, \u221285 %"],
)
def test_paper_em_refuses_an_impossible_first_percentage(answer):
    with pytest.raises(InvalidLLMOutput, match="outside 0-100") as e:
        paper.match("Ailanthus", answer, variant="em")
    assert e.value.raw == answer and e.value.stage == "rv.answer"


def test_paper_qg_ignores_percentages():
    assert paper.match("Ailanthus", "Ailanthus, 150%.", variant="qg").matched


@pytest.mark.parametrize(
    "answer",
    [
        "Ailanthus meets 120% of the criteria.",
        "Ailanthus meets 11 out of 10 requirements.",
        "Ailanthus: -20% match.",
    ],
)
def test_robust_em_refuses_impossible_shares(answer):
    with pytest.raises(InvalidLLMOutput, match="outside 0-100"):
        robust.match_text("Ailanthus", answer, variant="em")


def test_robust_em_skips_figures_that_are_not_shares():
    out = robust.match_text(
        "Ailanthus", "Ailanthus grew 300% in 2010 and meets 85 % of the criteria.", variant="em"
    )
    assert out.matched and out.percentage == 85.0 and out.percentages == [85.0]


def test_an_impossible_percentage_is_an_invalid_detection():
    from truthguard.rv import ReverseValidation

    model = ScriptedChatModel(
        script={"numbered list": "1. Tree genus", "Which entity fits": "Ailanthus, 140%."}
    )
    r = ReverseValidation(model=model, variant="em").invoke(
        {"answer": "Ailanthus is a genus of trees.", "entity": "Ailanthus"}
    )
    assert r.is_invalid and "outside 0-100" in r.invalid_reason
    assert r.raw_output == "Ailanthus, 140%."


@pytest.mark.parametrize("unit", ["1", "9%", " ", "Ailanthus ", "a(", "1.", "x", "-"])
def test_matchers_are_linear_on_100k_answers(unit):
    answer = (unit * (100_000 // len(unit) + 1))[:100_000]
    for match in (
        lambda: paper.match("Ailanthus altissima", answer, variant="em"),
        lambda: robust.match_text("Ailanthus altissima", answer, variant="em"),
    ):
        started = time.perf_counter()
        with contextlib.suppress(InvalidLLMOutput):
            match()
        assert time.perf_counter() - started < 5.0  # linear; backtracking took minutes
