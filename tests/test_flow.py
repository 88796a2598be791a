"""truthguard.sync.drive / adrive: one generator of operations, carried out sync or async."""

from __future__ import annotations

import asyncio

import pytest

from truthguard.sync import adrive, drive


class _Stop(Exception):
    """Stands for a framework's own control flow (LangGraph's interrupts)."""


def _flow(log: list[str]):
    """Adds what each operation gives; an operation's error is recorded and the flow goes on."""
    total = 0
    for op in ("one", "boom", "two"):
        try:
            total += yield op
        except ValueError as e:
            log.append(f"caught {e}")
    return total


def _run(op: str) -> int:
    if op == "boom":
        raise ValueError("boom")
    if op == "stop":
        raise _Stop
    return {"one": 1, "two": 2}[op]


async def _arun(op: str) -> int:
    await asyncio.sleep(0)  # really suspends
    return _run(op)


def test_sync_and_async_drivers_carry_out_the_same_flow():
    sync_log: list[str] = []
    async_log: list[str] = []
    assert drive(_flow(sync_log), _run) == 3
    assert asyncio.run(adrive(_flow(async_log), _arun)) == 3
    assert sync_log == async_log == ["caught boom"]


def test_passthrough_errors_and_the_flows_own_errors_reach_the_caller():
    def stops():
        yield "stop"

    with pytest.raises(_Stop):
        drive(stops(), _run, passthrough=(_Stop,))

    def fails():
        yield "one"
        raise RuntimeError("the flow's own")

    with pytest.raises(RuntimeError, match="the flow's own"):
        asyncio.run(adrive(fails(), _arun))


def test_drive_refuses_an_operation_that_would_suspend():
    with pytest.raises(TypeError, match="use adrive"):
        drive(_flow([]), _arun)
