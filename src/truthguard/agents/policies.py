"""What only an agent can do with a rejected answer: end the run, or ask a person.

Both are terminal policies for :class:`~truthguard.agents.GroundingMiddleware`, used beside the
guard's own (:class:`~truthguard.guard.Regenerate`, :class:`~truthguard.guard.Fallback`,
:class:`~truthguard.guard.Raise`). The middleware carries them out itself; they never produce a
step, so a plain guard refuses them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from truthguard.errors import InvalidInputError
from truthguard.guard.policies import GuardPolicy, PolicyContext, Step

__all__ = ["AgentStop", "EndRun", "HumanReview"]


class AgentStop(GuardPolicy):
    """Base of the agent-only terminal policies (carried out by the middleware)."""

    terminal: ClassVar[bool] = True

    async def astep(self, ctx: PolicyContext) -> Step:
        raise InvalidInputError(
            "policies",
            f"{type(self).__name__} only works inside GroundingMiddleware (an agent run)",
        )


class EndRun(AgentStop):
    """End the agent run without an answer (``jump_to: "end"``).

    The rejected answer never reaches the messages; it stays in the state under
    ``truthguard`` (a :class:`~truthguard.guard.GuardResult` with status ``rejected``).

    Example:
        >>> EndRun().terminal
        True
    """

    name: ClassVar[str] = "end"


class HumanReview(AgentStop):
    """Pause the run for a person to approve, edit or reject the answer (LangGraph
    ``interrupt()``; resume with ``Command(resume=...)``; needs a checkpointer).

    The interrupt's value is a dict with ``question``, ``answer``, ``evidence``, ``reason`` and
    ``verdict``. Resume with ``{"action": "approve"}``, ``{"action": "edit", "answer": "..."}``
    or ``{"action": "reject"}``.

    Example:
        >>> HumanReview(reject_answer="I can't answer that reliably.").reject_answer
        "I can't answer that reliably."
    """

    name: ClassVar[str] = "human_review"

    reject_answer: str | None = None
    """Released when the reviewer rejects the answer; None ends the run without an answer."""


def review_decision(value: Any) -> tuple[str, str | None]:
    """The reviewer's ``(action, answer)`` from a resume value.

    Raises:
        InvalidInputError: Not a dict with ``action`` approve / edit / reject (field
            ``resume.action``), or an edit without a non-blank ``answer`` (``resume.answer``).
    """
    if not isinstance(value, dict):
        raise InvalidInputError(
            "resume", f"expected a dict with an 'action', got {type(value).__name__}"
        )
    action = value.get("action")
    if action not in ("approve", "edit", "reject"):
        raise InvalidInputError(
            "resume.action", f"expected approve, edit or reject, got {action!r}"
        )
    answer = value.get("answer")
    if action == "edit" and (not isinstance(answer, str) or not answer.strip()):
        raise InvalidInputError("resume.answer", "an edit needs the new answer text")
    return action, answer if action == "edit" else None
