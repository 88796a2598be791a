"""Offline replay of recorded Reverse Validation runs (the PHD ChatGPT recordings).

:func:`replay_model` builds a :class:`RVReplayChatModel` that answers each detector call with the
recorded output for the same entity and stage, whatever the prompt text. The detector passes
``entity`` and ``replay_key`` (``"<variant>:query"`` / ``"<variant>:answer"``) in each call's
metadata. Two decisions follow from what the recordings hold:

* there is no recorded entity extraction, so replays need the ``entity`` in the input;
* there is no recorded *rebuilt* stage-1 query: a rebuild after an entity leak is served the same
  stage-1 recording, so the leak is reported as persisting. Run the detector with
  ``rebuild_leaks=False`` to skip that duplicate call (and its tokens) altogether.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from truthguard.datasets import RVRecord, load_rv_records
from truthguard.errors import InvalidInputError, MissingRecordingError
from truthguard.testing import ReplayChatModel

__all__ = ["RVReplayChatModel", "replay_key", "replay_model"]

_STEPS = {"query": "stage-1", "answer": "stage-2"}


def _norm(entity: Any) -> Any:
    # Whitespace never tells two entities apart ("Ailanthus " is "Ailanthus").
    return " ".join(entity.split()) if isinstance(entity, str) else entity


def replay_key(prompt: str, metadata: Mapping[str, Any]) -> tuple[Any, Any]:
    """Key of a detector call: ``(entity, "<variant>:<step>")`` from the run metadata."""
    return _norm(metadata.get("entity")), metadata.get("replay_key")


class RVReplayChatModel(ReplayChatModel):
    """A :class:`~truthguard.testing.ReplayChatModel` keyed by (entity, stage).

    Missing recordings raise :class:`~truthguard.errors.MissingRecordingError` with a message
    that says which entity and stage had none and how to avoid the call.

    Example:
        >>> m = RVReplayChatModel(recordings={("Hoy", "qg:answer"): "Hoy."})
        >>> m.invoke("q", config={"metadata": {"entity": "Hoy", "replay_key": "qg:answer"}}).content
        'Hoy.'
    """

    def key_for(self, prompt: str, metadata: Mapping[str, Any]) -> Any:
        return replay_key(prompt, metadata)

    def _produce(self, prompt: str, metadata: Mapping[str, Any]) -> str:
        entity, key = self.key_for(prompt, metadata)
        try:
            return self.recordings[(entity, key)]
        except (KeyError, TypeError):
            pass
        for (e, k), text in self.recordings.items():  # recordings given with stray spaces
            if k == key and _norm(e) == entity:
                return text
        variant, _, step = str(key).partition(":")
        if entity is None:
            hint = "pass 'entity' in the input: entity extraction was never recorded"
        elif step not in _STEPS:
            hint = f"the recordings hold only stage-1 and stage-2 outputs, not {step!r}"
        elif not any(_norm(e) == entity for e, _ in self.recordings):
            hint = "this entity is not among the recorded passages"
        else:
            hint = f"no {variant!r} recording of this stage"
        raise MissingRecordingError(
            (entity, key),
            f"{self.model_name}: no recorded {_STEPS.get(step, step)} output for entity "
            f"{entity!r} ({key}); {hint}",
        )


def replay_model(
    variant: Literal["em", "qg"],
    data_dir: str | Path | None = None,
    *,
    records: Iterable[RVRecord] | None = None,
    model_name: str | None = None,
) -> RVReplayChatModel:
    """A chat model serving the recorded ChatGPT outputs of one Reverse Validation variant.

    Args:
        variant: ``"em"`` or ``"qg"``; the detector must use the same variant.
        data_dir: Data directory for :func:`truthguard.datasets.load_rv_records`.
        records: Use these records instead of loading them (for example the WikiBio ones).
        model_name: Name used in cache keys (default ``"replay-<variant>"``).

    The model reports no ``usage_metadata``, so the session counts tokens with tiktoken on the
    prompts the detector sends and on the recorded answers.
    """
    if variant not in ("em", "qg"):
        raise InvalidInputError("variant", f"expected 'em' or 'qg', got {variant!r}")
    recs = list(records) if records is not None else load_rv_records(variant, data_dir)
    table: dict[tuple[str, str], str] = {}
    for r in recs:
        if r.variant != variant:
            raise InvalidInputError("records", f"record for {r.entity!r} is {r.variant!r}")
        table[(_norm(r.entity), f"{variant}:query")] = r.stage1
        table[(_norm(r.entity), f"{variant}:answer")] = r.stage2
    return RVReplayChatModel(
        recordings=table, model_name=model_name or f"replay-{variant}", report_usage=False
    )
