"""The pytest plugin: the assert_grounded fixture in a user's own test suite (run with pytester)."""

from __future__ import annotations

import tomllib
from pathlib import Path

pytest_plugins = ["pytester"]

# Off by name, then on by module: the same run whether or not the entry point is installed.
PLUGIN = ("-p", "no:truthguard", "-p", "truthguard.pytest_plugin")

USER_TESTS = """
SOURCES = ["Mars has two moons, Phobos and Deimos."]

def test_moons_answer(assert_grounded):
    result = assert_grounded("Mars has two moons.", SOURCES, question="Moons of Mars?")
    assert result.passing is True

def test_invented_answer(assert_grounded):
    assert_grounded("Mars has two moons. Mars has a ring of solid gold.", SOURCES,
                    question="What is Mars like?")
"""


def test_the_fixture_checks_with_the_local_refchecker_and_sums_up(pytester, embedder):
    pytester.makepyfile(test_bot=USER_TESTS)
    run = pytester.runpytest(*PLUGIN, f"--junitxml={pytester.path / 'out.xml'}")
    run.assert_outcomes(passed=1, failed=1)
    run.stdout.fnmatch_lines(
        [
            "*NotGrounded: answer not grounded*refchecker says hallucinated*gold*",
            "*= truthguard =*",
            "2 grounding check(s), 1 not grounded",
            "ok   test_bot.py::test_moons_answer  refchecker: factual (score *)",
            "FAIL test_bot.py::test_invented_answer  refchecker: hallucinated (score *)",
        ]
    )
    xml = (pytester.path / "out.xml").read_text()
    assert xml.count('<property name="truthguard"') == 2 and "&quot;grounded&quot;: true" in xml


def test_a_conftest_fixture_picks_the_detector(pytester):
    pytester.makeconftest(
        """
        import pytest
        from truthguard.testing import FakeDetector

        @pytest.fixture(scope="session")
        def grounding_detector():
            return FakeDetector(score=lambda inp: 0.9 if "moons" in inp.answer else 0.1,
                                threshold=0.5)
        """
    )
    pytester.makepyfile(
        """
        def test_moons(assert_grounded):
            assert assert_grounded("Mars has moons.", ["x"]).detector == "fake"

        def test_rings(assert_grounded):
            assert_grounded("Mars has rings.", ["x"])

        def test_score_floor(assert_grounded):
            assert_grounded("Mars has moons.", ["x"], min_score=0.95)
        """
    )
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(passed=1, failed=2)
    run.stdout.fnmatch_lines(["*score 0.9 below 0.95*", "3 grounding check(s), 2 not grounded"])


def test_the_option_names_a_detector_and_a_bad_one_names_the_field(pytester):
    pytester.makepyfile(
        detectors="""
        from truthguard.errors import LLMCallError
        from truthguard.testing import FakeDetector

        def down():
            return FakeDetector(error=LLMCallError("down", "the checker is down"))

        NOT_A_DETECTOR = 42
        """,
        test_one="""
        def test_unverified(assert_grounded):
            assert_grounded("Mars has moons.", ["Mars has two moons."])
        """,
    )
    run = pytester.runpytest(*PLUGIN, "--grounding-detector", "detectors:down")
    run.assert_outcomes(failed=1)  # no verdict is never grounded
    run.stdout.fnmatch_lines(["*fake says invalid*", "FAIL *test_unverified  fake: invalid*"])

    pytester.makeini("[pytest]\ngrounding_detector = detectors:NOT_A_DETECTOR\n")
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(errors=1)
    run.stdout.fnmatch_lines(["*grounding_detector*gave a int, not a truthguard detector*"])
    run = pytester.runpytest(*PLUGIN, "--grounding-detector", "detectors")
    run.stdout.fnmatch_lines(["*grounding_detector*expected MODULE:ATTR*"])


def test_without_checks_there_is_no_summary_section(pytester):
    # a suite that never asks for a grounding check (its own test does ordinary work)
    pytester.makepyfile("def test_plain():\n    assert sorted([3, 1, 2]) == [1, 2, 3]\n")
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(passed=1)
    assert "truthguard" not in run.stdout.str()


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    entry = pyproject["project"]["entry-points"]["pytest11"]
    assert entry == {"truthguard": "truthguard.pytest_plugin"}
    import truthguard.pytest_plugin as plugin

    assert callable(plugin.assert_grounded) and callable(plugin.grounding_detector)
