"""Progress bars on stderr (stdout stays clean for ``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

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
