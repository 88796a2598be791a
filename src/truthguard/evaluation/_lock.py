"""One ``evaluate`` run per output directory at a time: an exclusive lock on ``OUT/.lock``.

Two runs on one ``--out`` (a scheduler's retry, a second shell) would both score every row and
append both sets of results. The lock is the operating system's (``flock`` on POSIX,
``msvcrt.locking`` on Windows), so it is released when its holder exits, however it exits (a
SIGKILL included): there is never a stale lock to clean up. The file holds the holder's process
id, for the error message.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from truthguard.errors import InvalidInputError

__all__ = ["LOCK_NAME", "out_lock"]

LOCK_NAME = ".lock"

_POLL = 0.1  # seconds between tries where the platform cannot block on a lock


def _try_lock(f: IO[bytes], wait: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        while True:
            try:
                msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                return True
            except OSError:
                if not wait:
                    return False
                time.sleep(_POLL)
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def out_lock(out: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold ``out``'s lock for the block; without ``wait``, refuse at once when another run
    holds it (an :class:`InvalidInputError` on ``out`` naming that run's process id)."""
    path = out / LOCK_NAME
    with path.open("a+b") as f:
        if not _try_lock(f, wait):
            f.seek(0)
            holder = f.read(32).decode("ascii", "replace").strip() or "unknown"
            raise InvalidInputError(
                "out",
                f"{out} is in use by another evaluate run (process {holder}); wait for it to "
                "finish, pass --wait (wait=True) to start when it does, or write to another --out",
            )
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()).encode("ascii"))
        f.flush()
        yield
