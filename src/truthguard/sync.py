"""Run truthguard's async logic from sync code, without touching the caller's event loops.

The public face of :mod:`truthguard._sync` (which has the whole story): a sync entry point
submits its coroutine to truthguard's long-lived portal loop and blocks on it, so it works in a
plain script, inside a running loop (Jupyter, an async web app) and under ``asyncio.run`` alike.
Integrations use it for their sync paths, as the LlamaIndex ``GuardedQueryEngine.query`` does.

``drive`` / ``adrive`` run a generator of operations (the logic written once, as httpx's auth
flows are) with a sync or an async function that carries each operation out; the LlamaIndex
``GuardedQueryEngine`` runs its attempt loop this way.

Example:
    >>> from truthguard.sync import run_sync
    >>> async def answer() -> int:
    ...     return 42
    >>> run_sync(answer())
    42
"""

from truthguard._flow import adrive, drive
from truthguard._sync import run_sync

__all__ = ["adrive", "drive", "run_sync"]
