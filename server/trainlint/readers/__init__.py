"""Format detection and the one door to every reader.

``open_source(path)`` returns something with ``.log`` and ``.update()``: call ``update()`` again
when the file changed and only the new bytes are read. ``read(path)`` is a cold read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Protocol

from ..model import LogFile
from ..roles import RoleMap
from . import coqui, csv_log, hf_trainer_state, jsonl, text_stdout
from .base import FormatReader, Tail
from .tfevents import TensorBoardTail, is_event_file

READERS: dict[str, type[FormatReader]] = {
    hf_trainer_state.HFTrainerStateReader.format: hf_trainer_state.HFTrainerStateReader,
    coqui.CoquiReader.format: coqui.CoquiReader,
    csv_log.CsvReader.format: csv_log.CsvReader,
    jsonl.JsonlReader.format: jsonl.JsonlReader,
    text_stdout.TextStdoutReader.format: text_stdout.TextStdoutReader,
}
FORMATS = (*READERS, "tfevents")
HEAD_BYTES = 64 << 10
TEXT_SNIFF_BYTES = 1 << 20
_TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".log", ".rst", ".toml"}
_COQUI_NAME = re.compile(r"^trainer_\d+_log\.txt$")
# Names trainers give their stdout: read as text even before the first step is logged.
_STDOUT_NAME = re.compile(r"^(train|training|log|main|output|out|stdout)\.(log|txt)$|^slurm-\d+\.out$")


class Source(Protocol):
    log: LogFile

    def update(self) -> bool: ...


@dataclass(frozen=True)
class Detection:
    format: str | None
    reason: str  # why this format, or why not a training log


class NotALog(Exception):
    """The path is readable but is not a training log trainlint knows."""


def detect(path: str) -> Detection:
    """Name first, then content. Raises OSError when the path cannot be read."""
    name = os.path.basename(path.rstrip("/"))
    if os.path.isdir(path):
        if any(is_event_file(n) for n in os.listdir(path)):
            return Detection("tfevents", "a directory holding TensorBoard event files")
        return Detection(None, "a directory without event files")
    suffix = os.path.splitext(name)[1].lower()
    if is_event_file(name) and suffix not in _TEXT_SUFFIXES:
        return Detection("tfevents", "TensorBoard event file name")
    with open(path, "rb") as f:
        raw = f.read(HEAD_BYTES)
    if not raw:
        return Detection(None, "the file is empty")
    if b"\x00" in raw[:4096]:
        if suffix == ".wandb":
            return Detection(None, "a W&B binary datastore (.wandb); trainlint reads wandb-history.jsonl instead")
        return Detection(None, "a binary file, not a text log")
    head = raw.decode("utf-8", "replace")
    if hf_trainer_state.looks_like(head):
        return Detection("hf-trainer-state", "JSON with log_history")
    if name == "trainer_state.json":
        return Detection(None, "named trainer_state.json but has no log_history: not HF Trainer output")
    if _COQUI_NAME.match(name) or coqui.looks_like(head):
        return Detection("coqui", "Coqui trainer step blocks")
    if jsonl.looks_like(head):
        return Detection("jsonl", "one JSON object per line")
    if (suffix == ".csv" or csv_log.looks_like(head)) and (csv_log.looks_like(head) or suffix == ".csv"):
        return Detection("csv", "a header row and numeric rows")
    if text_stdout.looks_like(head):
        return Detection("text", "lines with a step and a loss")
    if len(raw) == HEAD_BYTES:  # long preambles (env and config dumps): look further for text logs
        with open(path, "rb") as f:
            more = f.read(TEXT_SNIFF_BYTES).decode("utf-8", "replace")
        if text_stdout.looks_like(more):
            return Detection("text", "lines with a step and a loss")
    if _STDOUT_NAME.match(name):
        return Detection("text", "a trainer stdout file name")
    return Detection(None, "no training-log pattern in its first 64 KB")


def open_source(path: str, fmt: str | None = None, roles: RoleMap | None = None) -> Source:
    """A reader positioned at the start of ``path``. Raises NotALog or OSError."""
    if fmt is None:
        d = detect(path)
        if d.format is None:
            raise NotALog(d.reason)
        fmt = d.format
    if fmt == "tfevents":
        return TensorBoardTail(path, roles)
    cls = READERS.get(fmt)
    if cls is None:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    log = LogFile(path=path, format=fmt)
    return Tail(path, cls(log, roles))


def read(path: str, fmt: str | None = None, roles: RoleMap | None = None) -> LogFile:
    src = open_source(path, fmt, roles)
    src.update()
    return src.log
