"""Evaluate your own data: score a file of answers, calibrate thresholds, report, export SFT data.

* :func:`evaluate` (``truthguard evaluate``): rows in, one result row per (row, detector) out,
  resumable, on this process or on Ray;
* :func:`calibrate` (``truthguard calibrate``): thresholds for a target precision / recall / F1,
  written back into the config;
* :func:`render_report` (``truthguard report``): one self-contained HTML file;
* :func:`export_sft` (``truthguard export-sft``): FEWL-best answers as chat fine-tuning data;
* :func:`convert_dataset` (``truthguard convert``): the CHALE / PHD dev data as rows.
"""

from __future__ import annotations

from truthguard.evaluation.calibrate import calibrate
from truthguard.evaluation.config import (
    ColumnMap,
    DetectorSpec,
    EvaluateConfig,
    ModelSpec,
    RaySpec,
    StoreSpec,
    build_detectors,
    build_model,
    build_store,
    load_config,
    save_config,
)
from truthguard.evaluation.convert import convert_dataset
from truthguard.evaluation.engine import evaluate, summarize
from truthguard.evaluation.io import read_results, read_rows
from truthguard.evaluation.points import auroc, choose_threshold, sweep
from truthguard.evaluation.report import render_report
from truthguard.evaluation.sft import export_sft

__all__ = [
    "ColumnMap",
    "DetectorSpec",
    "EvaluateConfig",
    "ModelSpec",
    "RaySpec",
    "StoreSpec",
    "auroc",
    "build_detectors",
    "build_model",
    "build_store",
    "calibrate",
    "choose_threshold",
    "convert_dataset",
    "evaluate",
    "export_sft",
    "load_config",
    "read_results",
    "read_rows",
    "render_report",
    "save_config",
    "summarize",
    "sweep",
]
