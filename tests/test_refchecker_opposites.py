"""Opposites: a claim word whose opposite its evidence states."""

import pytest

from truthguard.refchecker.opposites import PAIRS, crossed_flips, flips

CUP = "Redbridge Rovers won the Northern Cup in 1998 after beating Eastfield 2-1 in the final."


@pytest.mark.parametrize(
    ("claim", "evidence", "flipped"),
    [
        ("Redbridge Rovers lost the Northern Cup final in 1998.", CUP, ("lost", "won")),
        (
            "It lies 15 miles south of the Loop.",
            "It lies 15 miles north of the Loop.",
            ("south", "north"),
        ),
        ("Diversity rises rapidly.", "Diversity rises only very slowly.", ("rapidly", "slowly")),
        ("Redbridge Rovers won the Northern Cup in 1998.", CUP, None),
        # the rule words of a contest, where a river runs, where a sport is played
        (
            "Wearing a helmet is optional for every rider.",
            "Helmets are compulsory for every rider in the race.",
            ("optional", "compulsory"),
        ),
        (
            "The weir stands 12 km upstream of the dam.",
            "The weir was built 12 km downstream of the dam.",
            ("upstream", "downstream"),
        ),
        (
            "The appeal court overturned the verdict.",
            "The appeal court upheld the verdict in March.",
            ("overturned", "upheld"),
        ),
        # the sentence states the word itself too
        ("They won and lost.", "They won one and lost one.", None),
        # what a policy allows, what a setting or a state is
        (
            "Smoking is allowed on some flights.",
            "Smoking is prohibited on all flights.",
            ("allowed", "prohibited"),
        ),
        (
            "The account is active.",
            "The account is inactive.",
            ("active", "inactive"),
        ),
        (
            "The warranty stays valid if the seal is broken.",
            "The warranty is void if the seal is broken.",
            ("valid", "void"),
        ),
    ],
)
def test_a_word_put_for_its_opposite(claim, evidence, flipped):
    found = [(f.text, f.evidence_text) for f in flips(claim, evidence)]
    assert found == ([flipped] if flipped else [])


def test_converse_pairs_are_not_opposites():
    # "X came before Y" is "Y came after X": the same fact either way
    assert flips("The match came before the final.", "The final came after the match.") == []
    listed = {w for pair in PAIRS for w in pair}
    assert not {"before", "after", "older", "younger", "buy", "sell"} & listed


@pytest.mark.parametrize(
    ("claim", "evidence", "flipped"),
    [
        # a negated opposite can say the claim's word: nothing is set against it
        (
            "The date is different every year.",
            "Unlike Christmas, it doesn't fall on the same day every year.",
            None,
        ),
        ("The hearing was private.", "The hearing was not public, the court said.", None),
        # the negation governs its own clause only
        ("The hearing was private.", "It was not delayed, and the hearing was public.", "private"),
        # the claim's own negated opposite says the evidence's word
        ("Smoking is not allowed on any flight.", "Smoking is prohibited on all flights.", None),
    ],
)
def test_an_opposite_under_a_negation_is_not_set_against_the_claim(claim, evidence, flipped):
    found = [f.text for f in flips(claim, evidence)]
    assert found == ([flipped] if flipped else [])


def test_a_text_states_the_opposite_of_a_word():
    from truthguard.refchecker.opposites import stated_opposite

    assert stated_opposite("valid", "Coupons are void after the expiry date.")
    assert not stated_opposite("valid", "Coupons are valid until the expiry date.")
    assert not stated_opposite("cost", "Coupons are void after the expiry date.")


@pytest.mark.parametrize(
    ("claim", "evidence", "flipped"),
    [
        ("Deposits can be refunded.", "Deposits are non-refundable.", "refunded"),
        ("The deposit is refundable.", "The deposit is non-refundable.", "refundable"),
        ("Members pay £12 a class.", "Non-members pay £12 a class.", "Members"),
        # the claim denies what the prefix denies: the same fact
        ("Deposits can't be refunded.", "Deposits are non-refundable.", None),
        ("Deposits are not refundable.", "Deposits are non-refundable.", None),
        # a sentence stating both groups sets neither against the claim
        ("Members pay £8 a class.", "Members pay £8 and non-members £12 a class.", None),
        ("The clause is binding.", "The clause is non-binding.", "binding"),
        ("Tickets are transferable.", "Tickets are nontransferable.", "transferable"),
        # a word written together is a word of its own, unless an "-able" adjective
        ("The charity made a profit last year.", "It is a nonprofit founded in 1990.", None),
        ("Nobody was hurt.", "None of the staff were hurt.", None),
    ],
)
def test_a_word_is_set_against_the_same_word_denied_by_the_prefix_non(claim, evidence, flipped):
    found = [f.text for f in flips(claim, evidence)]
    assert found == ([flipped] if flipped else [])


TRAINING = "Fire safety training is mandatory for all new staff and optional for contractors."
ORDERS = "The minimum order is 20 units, and the maximum per customer is 500 units."


@pytest.mark.parametrize(
    ("claim", "evidence", "flipped"),
    [
        (
            "Fire safety training is optional for all new staff.",
            TRAINING,
            [("optional", "mandatory")],
        ),
        (
            "Fire safety training is mandatory for contractors.",
            TRAINING,
            [("mandatory", "optional")],
        ),
        ("The maximum order is 20 units.", ORDERS, [("maximum", "minimum")]),
        ("The minimum per customer is 500 units.", ORDERS, [("minimum", "maximum")]),
        # each word with what its own statement says, in any order
        ("Fire safety training is mandatory for new staff.", TRAINING, []),
        ("For contractors the training is optional, but all new staff must take it.", TRAINING, []),
        ("The maximum per customer is 500 units.", ORDERS, []),
        # a sentence saying the two in one statement tells nothing apart
        ("Training is optional for new staff.", "Training is optional or mandatory by site.", []),
    ],
)
def test_a_word_stated_beside_its_opposite_goes_with_its_own_statement(claim, evidence, flipped):
    got = crossed_flips(claim, evidence)
    assert [(f.text, f.evidence_text) for f in got] == flipped
