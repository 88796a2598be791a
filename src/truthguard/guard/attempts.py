"""The decisions of a guard's attempt loop, written once and free of I/O.

Every guard runs the same loop: answer, check, and while the answer fails, ask the policies in
order for the next step, until an answer passes, a fallback is released, a policy raises, or the
policies and attempts run out. :class:`AttemptLoop` owns the decisions of that loop and its
records; the guard owns the I/O. The loop hands out an *action*, the guard carries it out its own
way (a sync or async chain call, a stream, a LlamaIndex engine) and reports back:

* :class:`RunAttempt`: run the chain (or the step's runnable), check the answer when ``check``
  is set, report with :meth:`AttemptLoop.attempted`;
* :class:`AskPolicy`: await ``policy.astep(context)``, report the step with
  :meth:`AttemptLoop.stepped` or the exception with :meth:`AttemptLoop.policy_failed`;
* :class:`ReleaseAnswer`: hand out a policy's fixed answer, report with
  :meth:`AttemptLoop.released`;
* :class:`Finish`: the loop is over; build the output with :meth:`AttemptLoop.result`.

:class:`~truthguard.guard.HallucinationGuard` and :class:`~truthguard.guard.StreamingGuard` drive
it from async code, the LlamaIndex ``GuardedQueryEngine`` from a generator run sync or async.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig

from truthguard.errors import GuardRejected
from truthguard.guard._models import Attempt, GuardResult
from truthguard.guard.policies import GuardPolicy, PolicyContext, Release, Step
from truthguard.guard.usage import UsageCollector
from truthguard.result import DetectionResult, Usage

__all__ = [
    "Action",
    "AskPolicy",
    "AttemptLoop",
    "Finish",
    "ReleaseAnswer",
    "RunAttempt",
    "Status",
]

logger = logging.getLogger("truthguard.guard")

Status = Literal["passed", "fallback", "filtered", "rejected"]
"""How a guard ended: a checked answer passed, a fallback was released, the supported sentences
of an answer were released (``Filter``), or nothing passed."""


@dataclass
class RunAttempt:
    """Run the chain for attempt ``number`` and report the :class:`Attempt` it gave."""

    number: int
    """The attempt's number (1 for the chain's own answer); its runs carry ``guard:attempt:N``."""
    input: Any
    """The chain input of this attempt."""
    policy: str | None = None
    """Name of the policy that asked for it (None for the first attempt)."""
    runnable: Runnable[Any, Any] | None = None
    """Run this instead of the guarded chain (a fallback chain)."""
    configurable: dict[str, Any] = field(default_factory=dict)
    """Values merged into ``config["configurable"]`` for this attempt."""
    check: bool = True
    """Check the answer (an unchecked answer is released as it is, with status ``fallback``)."""


@dataclass
class AskPolicy:
    """Await ``policy.astep(context)`` and report the step, or the error it raised."""

    policy: GuardPolicy
    """The policy to ask."""
    context: PolicyContext
    """What the policy sees; its ``config`` counts the policy's own model calls."""
    number: int
    """The attempt the step will produce (its runs carry ``guard:attempt:N``)."""


@dataclass
class ReleaseAnswer:
    """Release a policy's fixed answer, unchecked, and report what was released."""

    answer: str
    """The answer to release."""
    number: int
    """The attempt it is recorded as."""
    policy: str
    """Name of the policy that gave it."""
    status: Literal["fallback", "filtered"] = "fallback"
    """How the loop ends once it is released."""
    contexts: list[str] = field(default_factory=list)
    """The contexts the answer was checked against (``filtered``)."""
    results: list[DetectionResult] = field(default_factory=list)
    """The checks behind the answer (``filtered``: one per sentence)."""


@dataclass
class Finish:
    """The loop is over: build the output from :meth:`AttemptLoop.result` or the records."""

    status: Status
    """How it ended."""


Action = RunAttempt | AskPolicy | ReleaseAnswer | Finish
"""What the guard is asked to do next."""

_A = TypeVar("_A", RunAttempt, AskPolicy, ReleaseAnswer, Finish)


def _no_config(number: int, usage: UsageCollector) -> RunnableConfig | None:
    return None


def _carry_input(carried: Any, original: Any, new: Any) -> Any:
    """The input of the next run of the guarded chain: ``new`` on top of what earlier steps
    changed. A step that passes the original input on keeps the carried one; a step that adds
    keys to the original dict keeps the keys earlier steps added (its own values win)."""
    if new is original:
        return carried
    if isinstance(new, Mapping) and isinstance(carried, Mapping):
        return {**carried, **new}
    return new


class AttemptLoop:
    """The attempt loop of one guarded request: which action comes next, and the records.

    Policies are tried in order, each up to its ``max_uses``; once ``max_attempts`` attempts
    are recorded only terminal policies (fallback, raise) are still asked. Once a check was
    refused over capacity (its verdict's ``over_capacity``), only policies with
    ``after_over_capacity`` (fallback, raise) are: retrying would add to the overload. A policy
    that raises is recorded as a failed attempt and the next one is asked, except for
    :class:`~truthguard.errors.GuardRejected` (the ``Raise`` policy), which ends the request.
    The model calls a policy makes (a query rewriter) are counted into the attempt it produces.
    Policies build on each other: a step that runs the guarded chain again keeps the
    ``configurable`` values and input keys earlier steps set (``ReRetrieve(k=[6])`` then
    ``Regenerate()`` regenerates over the 6 passages), unless it sets them itself.

    Args:
        question: The question being answered.
        input: The first attempt's chain input, given unchanged to every policy.
        policies: The guard's policies, in order.
        max_attempts: Most attempts before only terminal policies are asked.
        chain: The guarded chain, for policies that choose where their feedback goes
            (``feedback_route``); None sends feedback through the input.
        n_models: How many chat models of ``chain`` take feedback through ``configurable``.
        policy_config: Builds the config of a policy's own model calls from the number of the
            attempt it will produce and a collector that must count their usage.
        context: Builds the :class:`PolicyContext` (a subclass may shape the feedback).
        log: Where a broken policy is reported (a warning).
        history: The chat turns before the question, passed on to every policy.

    Example:
        >>> from truthguard.guard import Fallback
        >>> loop = AttemptLoop(
        ...     question="Q?", input="Q?", policies=[Fallback(answer="unsure")], max_attempts=2
        ... )
        >>> loop.start().number
        1
        >>> type(loop.attempted(Attempt(number=1, answer="A"))).__name__  # no verdict, no pass
        'AskPolicy'
    """

    def __init__(
        self,
        *,
        question: str,
        input: Any,
        policies: Sequence[GuardPolicy],
        max_attempts: int,
        chain: Runnable[Any, Any] | None = None,
        n_models: int = 0,
        policy_config: Callable[[int, UsageCollector], RunnableConfig | None] = _no_config,
        context: Callable[..., PolicyContext] = PolicyContext,
        log: logging.Logger = logger,
        history: Sequence[Any] = (),
    ) -> None:
        self.question = question
        self.input = input
        self.history = list(history)
        """The chat turns before the question (every check of the request reads them)."""
        self.policies = list(policies)
        self.max_attempts = max_attempts
        self.attempts: list[Attempt] = []
        """Every attempt so far, in order (policies see this list)."""
        self.errors: list[BaseException] = []
        """The chain's errors, in order."""
        self.status: Status | None = None
        """How the loop ended (None while it runs)."""
        self._chain = chain
        self._n_models = n_models
        self._policy_config = policy_config
        self._context = context
        self._log = log
        self._uses = [0] * len(self.policies)
        self._released: str | None = None
        self._pending: Action | None = None
        self._collector = UsageCollector()  # the asked policy's own model calls
        self._policy_usage = Usage()
        # What earlier policies changed (more passages, a rewritten query): later ones keep it.
        self._carried_input: Any = input
        self._carried_configurable: dict[str, Any] = {}
        self.over_capacity = False
        """A check of this request was refused over capacity: from then on only policies with
        ``after_over_capacity`` (``Fallback``, ``Raise``) are asked."""

    # -- what the guard reports -----------------------------------------------------------------

    def start(self) -> RunAttempt:
        """The first action: the chain's own answer to the original input, checked."""
        if self._pending is not None or self.attempts:
            raise RuntimeError("the attempt loop has already started")
        return self._hand(RunAttempt(number=1, input=self.input))

    def attempted(
        self,
        attempt: Attempt,
        *,
        error: BaseException | None = None,
        passed: bool | None = None,
        answered: bool | None = None,
        released: str | None = None,
    ) -> AskPolicy | Finish:
        """Record the attempt a :class:`RunAttempt` gave, and decide what comes next.

        Args:
            attempt: The attempt (its ``chain_usage`` gains the usage of the policy that asked
                for it).
            error: The chain's exception, when it raised.
            passed: Whether the checked answer passed (default: ``attempt.passing``).
            answered: Whether the attempt produced an answer, which an unchecked attempt then
                releases (default: ``attempt.answer is not None``).
            released: The text released so far (streaming); the policies asked next see it.
        """
        action = self._take(RunAttempt)
        if action.policy is not None:
            attempt.chain_usage = self._policy_usage + attempt.chain_usage
        self.attempts.append(attempt)
        if error is not None:
            self.errors.append(error)
        if released is not None:
            self._released = released
        if action.check and attempt.verdict is not None and attempt.verdict.over_capacity:
            self.over_capacity = True
        if not action.check:
            if attempt.answer is not None if answered is None else answered:
                return self._finish("fallback")
        elif attempt.passing if passed is None else passed:
            return self._finish("passed")
        return self._next()

    def stepped(self, step: Step) -> RunAttempt | ReleaseAnswer:
        """Take the step the asked policy returned: run it, or release its answer."""
        action = self._take(AskPolicy)
        self._policy_usage = self._collector.usage()
        if isinstance(step, Release):
            return self._hand(
                ReleaseAnswer(
                    answer=step.answer,
                    number=action.number,
                    policy=action.policy.name,
                    status=step.status,
                    contexts=list(step.contexts),
                    results=list(step.results),
                )
            )
        step_input, configurable = step.input, dict(step.configurable)
        if step.runnable is None:  # the guarded chain again: build on what earlier steps changed
            step_input = _carry_input(self._carried_input, self.input, step_input)
            configurable = {**self._carried_configurable, **configurable}
            self._carried_input, self._carried_configurable = step_input, configurable
        return self._hand(
            RunAttempt(
                number=action.number,
                input=step_input,
                policy=action.policy.name,
                runnable=step.runnable,
                configurable=configurable,
                check=step.check,
            )
        )

    def policy_failed(self, error: Exception) -> AskPolicy | Finish:
        """Record that the asked policy raised (or its step could not be carried out).

        A broken policy must not lose the answers so far: it becomes a failed attempt and the
        next policy is asked.

        Raises:
            GuardRejected: ``error`` itself: the ``Raise`` policy ends the request, carrying
                every attempt.
        """
        action = self._take(AskPolicy)
        name = action.policy.name
        if isinstance(error, GuardRejected):
            self.status = "rejected"
            raise error
        self._log.warning("truthguard: policy %s failed: %s", name, error)
        self.attempts.append(
            Attempt(
                number=action.number,
                policy=name,
                error=f"policy failed: {type(error).__name__}: {error}",
                chain_usage=self._collector.usage(),
            )
        )
        return self._next()

    def released(self, output: Any) -> Finish:
        """Record the answer a :class:`ReleaseAnswer` handed out (``output``: in the guard's
        own form, such as a LlamaIndex ``Response``); the loop ends with the action's status
        (``fallback``, or ``filtered`` for :class:`~truthguard.guard.Filter`)."""
        action = self._take(ReleaseAnswer)
        self.attempts.append(
            Attempt(
                number=action.number,
                policy=action.policy,
                answer=action.answer,
                output=output,
                contexts=action.contexts,
                results=action.results,
                chain_usage=self._policy_usage,
                check_usage=Usage.total([r.usage for r in action.results]),
            )
        )
        return self._finish(action.status)

    # -- what the guard builds its output from --------------------------------------------------

    def usage(self) -> Usage:
        """Total usage of every attempt (chain and checks); wall time is the attempts' sum."""
        total = Usage.total([a.chain_usage + a.check_usage for a in self.attempts])
        total.wall_seconds = sum(a.seconds for a in self.attempts)
        return total

    def chain_error(self) -> BaseException | None:
        """The chain's first error when no attempt produced an answer (nothing to keep)."""
        if self.errors and all(a.answer is None for a in self.attempts):
            return self.errors[0]
        return None

    def result(self) -> GuardResult:
        """The guard's result: the answer of the last attempt when it passed or was a released
        fallback. A rejected result releases nothing (``answer`` and ``output`` are None); its
        verdict is that of the last answer there was, which stays in ``attempts``.

        Raises:
            RuntimeError: The loop has not finished.
            Exception: The chain's own first error, when no attempt produced an answer.
        """
        if self.status is None:
            raise RuntimeError("the attempt loop has not finished")
        final: Attempt | None = self.attempts[-1]
        if self.status == "rejected" and final.answer is None:  # type: ignore[union-attr]
            final = next((a for a in reversed(self.attempts) if a.answer is not None), None)
        if final is None:  # nothing to release or keep: the caller sees the chain's own error
            raise self.chain_error() or RuntimeError("the guarded chain gave no answer")
        released = self.status != "rejected"  # a rejected answer is kept only in the attempts
        return GuardResult(
            question=self.question,
            answer=final.answer if released else None,
            output=final.output if released else None,
            status=self.status,
            passing=self.status == "passed",
            verdict=final.verdict,
            attempts=self.attempts,
            usage=self.usage(),
        )

    # -- machinery ------------------------------------------------------------------------------

    def _hand(self, action: _A) -> _A:
        self._pending = action
        return action

    def _take(self, kind: type[_A]) -> _A:
        action = self._pending
        if not isinstance(action, kind):
            if action is None:
                raise RuntimeError("the attempt loop has not started: call start() first")
            if isinstance(action, Finish):
                raise RuntimeError(f"the attempt loop has finished ({action.status})")
            raise RuntimeError(
                f"the attempt loop is waiting for the result of {type(action).__name__}, "
                f"not of {kind.__name__}"
            )
        self._pending = None
        return action

    def _finish(self, status: Status) -> Finish:
        self.status = status
        return self._hand(Finish(status))

    def _next_policy(self) -> int | None:
        exhausted = len(self.attempts) >= self.max_attempts
        for i, p in enumerate(self.policies):
            if self._uses[i] >= p.max_uses or (exhausted and not p.terminal):
                continue
            if self.over_capacity and not p.after_over_capacity:
                continue
            return i
        return None

    def _next(self) -> AskPolicy | Finish:
        i = self._next_policy()
        if i is None:
            return self._finish("rejected")
        policy = self.policies[i]
        self._uses[i] += 1
        number = len(self.attempts) + 1
        self._collector = collector = UsageCollector()
        route = getattr(policy, "feedback_route", None)
        context = self._context(
            question=self.question,
            input=self.input,
            attempts=self.attempts,
            uses=self._uses[i],
            config=self._policy_config(number, collector),
            feedback_route=route(self._chain, self._n_models)
            if route and self._chain is not None
            else "input",
            released=self._released,
            history=self.history,
        )
        return self._hand(AskPolicy(policy=policy, context=context, number=number))
