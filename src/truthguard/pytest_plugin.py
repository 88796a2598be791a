"""The pytest plugin: grounding checks in your own test suite.

Installed with truthguard (the ``pytest11`` entry point ``truthguard``), it gives every test
the ``assert_grounded`` fixture, :func:`truthguard.testing.assert_grounded` bound to the
session's detector, and adds a ``truthguard`` section to the terminal summary listing every
check (its test, label and score). Each check is also recorded as a ``truthguard`` user
property of its test, so it lands in ``--junitxml`` reports.

The detector is the local ``RefChecker`` (no model call, so tests stay offline) unless
``--grounding-detector MODULE:ATTR`` (ini option ``grounding_detector``) names a detector or a
callable returning one, or a ``conftest.py`` overrides the ``grounding_detector`` fixture::

    # conftest.py
    import pytest
    from truthguard.refchecker import RefChecker

    @pytest.fixture(scope="session")
    def grounding_detector():
        return RefChecker(threshold=0.6)

    # test_answers.py
    def test_the_bot_answers_from_the_handbook(assert_grounded):
        answer = my_rag_chain.invoke("How many vacation days?")
        assert_grounded(answer, handbook_passages, question="How many vacation days?")

Nothing heavy is imported until a test asks for a fixture. ``-p no:truthguard`` turns the
plugin off.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

_CHECKS = pytest.StashKey[list[dict[str, Any]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("truthguard", "grounding checks (truthguard)")
    group.addoption(
        "--grounding-detector",
        default=None,
        metavar="MODULE:ATTR",
        help="detector for the assert_grounded fixture: a detector or a callable returning "
        "one (default: the local RefChecker, no model call)",
    )
    parser.addini(
        "grounding_detector",
        "detector for the assert_grounded fixture, as MODULE:ATTR",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_CHECKS] = []


def _load_detector(spec: str) -> Any:
    from truthguard.detector import BaseDetector
    from truthguard.errors import InvalidInputError

    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise InvalidInputError("grounding_detector", f"expected MODULE:ATTR, got {spec!r}")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise InvalidInputError("grounding_detector", f"cannot import {spec!r}: {e}") from e
    detector = found() if callable(found) and not isinstance(found, BaseDetector) else found
    if not isinstance(detector, BaseDetector):
        raise InvalidInputError(
            "grounding_detector",
            f"{spec!r} gave a {type(detector).__name__}, not a truthguard detector",
        )
    return detector


@pytest.fixture(scope="session")
def grounding_detector(pytestconfig: pytest.Config) -> Any:
    """The detector ``assert_grounded`` checks with; override it in a ``conftest.py``."""
    spec = pytestconfig.getoption("grounding_detector") or pytestconfig.getini("grounding_detector")
    if spec:
        return _load_detector(spec)
    from truthguard.refchecker import RefChecker

    return RefChecker()


@pytest.fixture
def assert_grounded(grounding_detector: Any, request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``assert_grounded(answer, contexts, *, question=..., min_score=None)``: fail the test
    unless the answer is supported by the contexts; returns the ``DetectionResult``."""
    from truthguard.testing import NotGrounded
    from truthguard.testing import assert_grounded as check

    checks = request.config.stash[_CHECKS]

    def assert_grounded(
        answer: str,
        contexts: Sequence[Any],
        *,
        question: str = "What do the sources say?",
        min_score: float | None = None,
    ) -> Any:
        result, grounded = None, False
        try:
            result = check(
                answer, contexts, question=question, detector=grounding_detector,
                min_score=min_score,
            )  # fmt: skip
            grounded = True
        except NotGrounded as e:
            result = e.result
            raise
        finally:  # recorded whether it passed, failed or the detector broke
            record = _record(request.node.nodeid, result, grounded)
            checks.append(record)
            request.node.user_properties.append(("truthguard", json.dumps(record)))
        return result

    return assert_grounded


def _record(test: str, result: Any, grounded: bool) -> dict[str, Any]:
    if result is None:
        return {"test": test, "grounded": False, "label": "error"}
    return {
        "test": test,
        "grounded": grounded,
        "detector": result.detector,
        "label": result.label.value,
        "score": result.score,
    }


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    checks = config.stash.get(_CHECKS, [])
    if not checks:
        return
    failed = sum(not c.get("grounded") for c in checks)
    terminalreporter.section("truthguard")
    terminalreporter.write_line(f"{len(checks)} grounding check(s), {failed} not grounded")
    for c in checks:
        score = "-" if c.get("score") is None else f"{c['score']:.3f}"
        mark = "ok  " if c.get("grounded") else "FAIL"
        terminalreporter.write_line(
            f"{mark} {c['test']}  {c.get('detector', '?')}: {c.get('label', 'error')} "
            f"(score {score})"
        )
