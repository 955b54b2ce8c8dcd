"""Format detection and the one door to every reader.

``open_source(path)`` returns something with ``.log`` and ``.update()``: call ``update()`` again
when the file changed and only the new bytes are read. ``read(path)`` is a cold read.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from typing import Any

from .. import fsio
from ..fsio import open_regular
from ..model import LogFile
from ..roles import RoleMap
from .base import FormatReader, Source, Tail
from .stores import StoreTail, mlflow_meta, store_kind
from .tfevents import TensorBoardTail, is_event_file, split_dirs

# Format -> (module, reader class). Modules load on first use: a check of one trainer_state.json
# does not pay for the CSV module or the stdout reader's patterns.
READERS: dict[str, tuple[str, str]] = {
    "hf-trainer-state": ("hf_trainer_state", "HFTrainerStateReader"),
    "coqui": ("coqui", "CoquiReader"),
    "csv": ("csv_log", "CsvReader"),
    "jsonl": ("jsonl", "JsonlReader"),
    "text": ("text_stdout", "TextStdoutReader"),
}
FORMATS = (*READERS, "tfevents", "mlflow", "dvclive", "mlflow-db")
# Formats without lines: their findings go on a text view of their records (event files, a database).
BINARY_FORMATS = ("tfevents", "mlflow-db")  # "custom" needs a `formats:` entry of the configuration


def _module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"{__name__}.{name}")


def reader_class(fmt: str) -> type[FormatReader]:
    module, cls = READERS[fmt]
    return getattr(_module(module), cls)
HEAD_BYTES = 64 << 10
TEXT_SNIFF_BYTES = 1 << 20
_TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".log", ".rst", ".toml"}
_COQUI_NAME = re.compile(r"^trainer_\d+_log\.txt$")
# Names trainers give their stdout: read as text even before the first step is logged.
_STDOUT_NAME = re.compile(r"^(train|training|log|main|output|out|stdout)\.(log|txt)$|^slurm-\d+\.out$")


@dataclass(frozen=True)
class Detection:
    format: str | None
    reason: str  # why this format, or why not a training log


class NotALog(Exception):
    """The path is readable but is not a training log trainlint knows."""


def detect(path: str) -> Detection:
    """Name first, then content. Raises OSError when the path cannot be read."""
    name = os.path.basename(path.rstrip("/"))
    if fsio.isdir(path):
        kind = store_kind(path) if not fsio._remote(path) else None
        if kind == "mlflow":
            if mlflow_meta(path).get("lifecycle_stage") == "deleted":
                return Detection(None, "a deleted MLflow run")
            return Detection("mlflow", "an MLflow run folder (meta.yaml and metrics/)")
        if kind == "dvclive":
            return Detection("dvclive", "a DVCLive folder (plots/metrics/*.tsv)")
        if any(is_event_file(n) for n in fsio.listdir(path)):
            return Detection("tfevents", "a directory holding TensorBoard event files")
        if split_dirs(path):
            return Detection("tfevents", "a TensorBoard run written as split folders (train/, validation/)")
        return Detection(None, "a directory without event files")
    suffix = os.path.splitext(name)[1].lower()
    if is_event_file(name) and suffix not in _TEXT_SUFFIXES:
        return Detection("tfevents", "TensorBoard event file name")
    with open_regular(path) as f:
        raw = f.read(HEAD_BYTES)
        found = _detect_content(path, name, suffix, raw)
        if found is not None:
            return found
        if len(raw) == HEAD_BYTES:
            # long preambles (env and config dumps) hide text logs: read on from where the head ended
            more = (raw + f.read(TEXT_SNIFF_BYTES - HEAD_BYTES)).decode("utf-8", "replace")
            if _module("text_stdout").looks_like(more):
                return Detection("text", "lines with a step and a loss")
    if _STDOUT_NAME.match(name):
        return Detection("text", "a trainer stdout file name")
    return Detection(None, "no training-log pattern in its first 64 KB")


def _detect_content(path: str, name: str, suffix: str, raw: bytes) -> Detection | None:
    if not raw:
        return Detection(None, "the file is empty")
    if raw.startswith(b"SQLite format 3\x00"):
        if _module("mlflow_db").is_mlflow_db(path):
            return Detection("mlflow-db", "an MLflow SQLite store (metrics and runs tables)")
        return Detection(None, "an SQLite database without MLflow's metrics and runs tables")
    if b"\x00" in raw[:4096]:
        if suffix == ".wandb":
            return Detection(None, "a W&B binary datastore (.wandb), not read yet; trainlint reads the run's stdout "
                                   "(files/output.log) and wandb-history.jsonl where present")
        return Detection(None, "a binary file, not a text log")
    head = raw.decode("utf-8", "replace")
    if _module("hf_trainer_state").looks_like(head):
        return Detection("hf-trainer-state", "JSON with log_history")
    if name == "trainer_state.json":
        return Detection(None, "named trainer_state.json but has no log_history: not HF Trainer output")
    if _COQUI_NAME.match(name) or _module("coqui").looks_like(head):
        return Detection("coqui", "Coqui trainer step blocks")
    if _module("jsonl").looks_like(head):
        return Detection("jsonl", "one JSON object per line")
    if suffix == ".csv" or _module("csv_log").looks_like(head):
        return Detection("csv", "a header row and numeric rows")
    if _module("text_stdout").looks_like(head):
        return Detection("text", "lines with a step and a loss")
    return None


def open_source(path: str, fmt: str | None = None, roles: RoleMap | None = None, user: Any = None) -> Source:
    """A reader positioned at the start of ``path``. Raises NotALog or OSError. ``user`` is the matching
    ``formats:`` entry of the configuration (readers.custom.UserFormat), which wins over detection."""
    if user is not None and fmt in (None, "custom"):
        from .custom import CustomReader

        log = LogFile(path=path, format="custom")
        return Tail(path, CustomReader(log, roles, user.patterns))
    if fmt == "custom":
        raise NotALog("no `formats:` entry of the configuration matches this file")
    if fmt == "mlflow-rest" or (fmt is None and path.startswith("mlflow:")):  # a tracking server's run
        from .mlflow_rest import MlflowRestTail

        return MlflowRestTail(path, roles)
    if fmt is None:
        d = detect(path)
        if d.format is None:
            raise NotALog(d.reason)
        fmt = d.format
    if fmt == "tfevents":
        return TensorBoardTail(path, roles)
    if fmt in ("mlflow", "dvclive"):
        return StoreTail(path, fmt, roles)
    if fmt == "mlflow-db":
        from .mlflow_db import MlflowDbTail

        return MlflowDbTail(path, roles)
    if fmt not in READERS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    log = LogFile(path=path, format=fmt)
    return Tail(path, reader_class(fmt)(log, roles))


def read(path: str, fmt: str | None = None, roles: RoleMap | None = None) -> LogFile:
    src = open_source(path, fmt, roles)
    src.update()
    return src.log
