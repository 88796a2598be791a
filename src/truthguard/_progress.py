"""Progress bars on stderr (stdout stays clean for ``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from tqdm.auto import tqdm

__all__ = ["ProgressCallback", "progress"]

T = TypeVar("T")


def progress(
    items: Iterable[T], *, desc: str, total: int | None = None, enabled: bool = True
) -> Iterable[T]:
    """Wrap ``items`` in a tqdm bar on stderr (hidden when not a terminal and ``enabled`` false)."""
    return tqdm(
        items,
        desc=desc,
        total=total,
        file=sys.stderr,
        disable=not enabled,
        leave=False,
        dynamic_ncols=True,
    )


class ProgressCallback(BaseCallbackHandler):
    """Advances ``bar`` once per top-level run that ends, well or not (one per batch item)."""

    # Inline: a bar update is cheap, and the loop's executor may already be shut down when a
    # failed batch's leftover runs end (that used to print one callback error per run).
    run_inline = True

    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        if parent_run_id is None:
            self.bar.update(1)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        if parent_run_id is None:
            self.bar.update(1)
