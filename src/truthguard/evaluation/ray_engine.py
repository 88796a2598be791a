"""The Ray engine: the local engine's scoring (``evaluation.scoring``) in Ray Data actors.

Each actor builds its detectors once from the *configuration* (never from pickled clients), so
models, HTTP clients and the store connection are created inside the worker. A model's
``requests_per_second`` is split evenly between the actors, and ``concurrency`` bounds the checks
each actor has in flight. Workers share artifacts only through a Chroma server
(``store.url``): a local ``store.path`` cannot be opened by several processes at once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from truthguard.errors import ConfigurationError
from truthguard.evaluation.scoring import Job, ascore_rows, detector_fingerprint

__all__ = ["run_ray"]

# Passed to workers so they behave like the driver (offline model, no telemetry, same code).
_ENV = (
    "PYTHONPATH",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "ANONYMIZED_TELEMETRY",
    "TOKENIZERS_PARALLELISM",
    "TRUTHGUARD_HOME",
    "TRUTHGUARD_DATA_DIR",
)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise ConfigurationError(
            "the ray engine needs Ray Data: pip install 'truthguard[ray]'"
        ) from e
    return ray


class _Scorer:
    """A Ray Data actor: detectors built once, then one batch of rows at a time."""

    def __init__(self, config: dict[str, Any], base_dir: str, workers: int) -> None:
        from truthguard.evaluation.config import build_detectors, build_store, load_config

        cfg = load_config(config)
        store = build_store(cfg.store, base_dir=Path(base_dir))
        self.detectors = build_detectors(cfg, store=store, rate_share=workers)
        self.fingerprints = {n: detector_fingerprint(cfg, n) for n in cfg.detectors}

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        from truthguard._sync import run_sync

        rows = [json.loads(x) for x in batch["row"]]
        todo = {r["id"]: set(r.pop("_todo")) for r in rows}
        results = run_sync(ascore_rows(self.detectors, self.fingerprints, rows, todo))
        return {"result": np.array([json.dumps(r, ensure_ascii=False) for r in results])}


def run_ray(job: Job) -> None:
    """Score ``job.rows`` on Ray; results are written as batches come back."""
    ray = _ray()
    cfg = job.config
    workers = cfg.ray.workers
    if cfg.store is not None and cfg.store.url is None and workers > 1:
        raise ConfigurationError(
            "store: Ray workers cannot share a local store directory; run a Chroma server "
            "(chroma run --path DIR) and set store.url"
        )
    started_here = not ray.is_initialized()
    if started_here:
        env = {k: os.environ[k] for k in _ENV if k in os.environ}
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "runtime_env": {"env_vars": env},
        }
        if cfg.ray.address is not None:
            kwargs["address"] = cfg.ray.address
        elif cfg.ray.num_cpus is not None:
            kwargs["num_cpus"] = cfg.ray.num_cpus
        ray.init(**kwargs)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # our own bar counts results
        items = [
            {"row": json.dumps({**r, "_todo": sorted(job.todo[r["id"]])}, ensure_ascii=False)}
            for r in job.rows
        ]
        ds = ray.data.from_items(items)
        ds = ds.map_batches(
            _Scorer,
            fn_constructor_kwargs={
                "config": cfg.model_dump(mode="json"),
                "base_dir": str(job.base_dir),
                "workers": workers,
            },
            batch_size=cfg.ray.batch_size,
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
        )
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            results = [json.loads(x) for x in batch["result"]]
            job.bar.update(job.writer.write(results))
    finally:
        if started_here:
            ray.shutdown()
