"""Progress bars: a batch's progress callback never depends on the loop's executor."""

from __future__ import annotations

import asyncio
import logging

from langchain_core.runnables import RunnableLambda

from truthguard._progress import ProgressCallback


class _Bar:
    def __init__(self) -> None:
        self.n = 0

    def update(self, k: int) -> None:
        self.n += k


async def test_progress_callback_runs_when_the_loops_executor_is_shut_down(caplog):
    # What happens after a failed batch: leftover runs end while the loop winds down.
    await asyncio.get_running_loop().shutdown_default_executor()

    async def work(x: int) -> int:
        if x == 2:
            raise ValueError("boom")
        return x

    bar = _Bar()
    with caplog.at_level(logging.WARNING):
        out = await RunnableLambda(work).abatch(
            [1, 2, 3], {"callbacks": [ProgressCallback(bar)]}, return_exceptions=True
        )
    assert out[0] == 1 and isinstance(out[1], ValueError)
    assert bar.n == 3  # failed runs advance the bar too
    assert "Error in ProgressCallback" not in caplog.text
