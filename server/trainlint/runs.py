"""From a path to the logs to judge, and the run-level facts that bear on each.

A run directory can hold several logs of one run: HF Trainer writes ``checkpoint-N/trainer_state.json``
snapshots (each a prefix of the run's log by design) beside the root file and ``runs/`` event
files; Coqui, ultralytics and detectron2 write an event file beside their text log. A run is judged
on the log a user opens (the root file; the text log), the snapshots and event files are read for
what they say about the run's extent, and are listed, not judged again. Event files beside text logs of
which no series is read (tensorboardX's stdout of NaN warnings, Lightning's Hydra log) are the run's curve:
they are judged in their own right, and nothing is judged twice, as the text logs hold no series.
Checkpoint files are only listed and, when asked, checked as ZIP archives: never loaded, never unpickled.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .core import fsio
from .core.model import LogFile
from .discovery import discover
from .readers import READ_ERRORS, NotALog, Source, open_source

_CKPT_NAMES = (
    (re.compile(r"^best_model_(\d+)\.pth$"), "best-model"),
    (re.compile(r"^checkpoint_(\d+)\.pth$"), "checkpoint"),
    (re.compile(r"^checkpoint-(\d+)$"), "checkpoint"),                         # HF output dirs
    (re.compile(r"step=(\d+).*\.ckpt$"), "checkpoint"),                         # Lightning
    (re.compile(r"^(?:model|ckpt|checkpoint)[-_.]?(?:step[-_]?)?(\d+)\.(?:pt|pth|ckpt|bin|safetensors)$"),
     "checkpoint"),
)

if TYPE_CHECKING:
    from typing import Any


@dataclass
class Artefact:
    path: str
    kind: str            # "checkpoint", "best-model", "snapshot", "event-file"
    step: float | None


@dataclass
class Item:
    path: str
    format: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    items: list[Item] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    companions: list[tuple[str, str]] = field(default_factory=list)  # (path, "read as part of <log>")

    @property
    def considered(self) -> int:
        return len(self.items) + len(self.skipped) + len(self.unreadable) + len(self.companions)


def run_dir(path: str) -> str:
    """The run directory of a log: an HF snapshot's run is the directory above checkpoint-N/."""
    if not fsio.isdir(path):
        d = os.path.dirname(path)
        return os.path.dirname(d) if re.fullmatch(r"checkpoint-\d+", os.path.basename(d)) else d
    # A directory of event files: HF writes them to <output>/runs/<date_host>/.
    if os.path.basename(os.path.dirname(path.rstrip(os.sep))) == "runs":
        return os.path.dirname(os.path.dirname(path.rstrip(os.sep)))
    return path


def plan(root: str, cfg: Any = None) -> Plan:
    """Discover logs under root and decide which are judged, which are read as companions."""
    d = discover(root, formats=cfg if cfg is not None and (getattr(cfg, "formats", None)
                                                           or getattr(cfg, "datasets", None)) else None)
    out = Plan(skipped=list(d.skipped), unreadable=list(d.unreadable))
    by_run: dict[str, list[tuple[str, str]]] = {}
    for f in d.found:
        by_run.setdefault(run_dir(f.path), []).append((f.path, f.format))
    explicit_file = not fsio.isdir(root)
    for rd, logs in by_run.items():
        states = [p for p, fmt in logs if fmt == "hf-trainer-state"]
        root_states = [p for p in states if os.path.dirname(p) == rd]
        snapshots = [p for p in states if p not in root_states]
        primaries = [(p, fmt) for p, fmt in logs if fmt != "tfevents" and p not in snapshots]
        if not root_states and snapshots and not explicit_file:
            newest = max(snapshots, key=_snapshot_step)
            primaries.append((newest, "hf-trainer-state"))
            snapshots = [s for s in snapshots if s != newest]
        events = [p for p, fmt in logs if fmt == "tfevents"]
        if explicit_file:
            primaries = [(p, fmt) for p, fmt in logs]
        # Event files are a companion of a log that holds the run's curve; beside logs of which nothing is read (a
        # stdout of warnings: tensorboardX, Lightning's Hydra log) they are the run's judged log themselves.
        host = None if explicit_file or not events else next(
            (p for p, fmt in primaries if fmt != "dataset" and _yields_series(p, fmt, cfg)), None)
        for p, fmt in primaries:
            out.items.append(Item(p, fmt, {"snapshots": [s for s in snapshots if s != p],
                                             "event_dirs": events if fmt != "tfevents" and host is not None else []}))
        if not explicit_file:
            judged = primaries[0][0] if primaries else None
            for s in snapshots:
                out.companions.append((s, f"a checkpoint snapshot of the run, read as part of {judged}"))
            if host is not None:
                for e in events:
                    out.companions.append((e, f"event files of the run, read as part of {host}"))
            else:
                out.items.extend(Item(e, "tfevents", {"snapshots": [], "event_dirs": []}) for e in events)
    return out


def _yields_series(path: str, fmt: str, cfg: Any = None) -> bool:
    """Whether any point of a series is read from the log at ``path``: read 1 MB at a time up to the first point,
    so a log that holds a curve costs its first lines, and one that holds none (it is then cheap to judge) one
    read. A log that cannot be read holds no curve the event files beside it could stand in for."""
    try:
        src = open_source(path, fmt, getattr(cfg, "roles", None),
                          cfg.format_for(path) if cfg is not None and hasattr(cfg, "format_for") else None)
        src.update(1 << 20)
        while not any(len(s) for s in src.log.series.values()):
            left = src.behind
            if not left:
                return False
            src.update(1 << 20)
            if src.behind >= left:  # a reader that stopped advancing: what it read is the answer
                return False
        return True
    except READ_ERRORS:
        return False


def _snapshot_step(path: str) -> float:
    m = re.search(r"checkpoint-(\d+)", path)
    return float(m.group(1)) if m else -1.0


class Companions:
    """Incremental readers of a run's companion logs (snapshots, event files), kept between calls."""

    def __init__(self) -> None:
        self._sources: dict[str, Source] = {}

    def last_step(self, path: str, fmt: str) -> float | None:
        src = self._sources.get(path)
        try:
            if src is None:
                src = self._sources[path] = open_source(path, fmt)
            src.update()
        except (OSError, NotALog):
            self._sources.pop(path, None)
            return None
        lg = src.log
        if fmt == "hf-trainer-state" and isinstance(lg.facts.get("global_step"), int | float):
            return float(lg.facts["global_step"])
        steps = [max(s.steps) for s in lg.series.values() if len(s)]
        return max(steps) if steps else None

    def forget(self, path: str) -> None:
        self._sources.pop(path, None)

    def log_of(self, path: str) -> LogFile | None:
        src = self._sources.get(path)
        return src.log if src is not None else None


def artefacts(path: str) -> list[Artefact]:
    """Checkpoint-like files and folders in the run directory of ``path`` with the step in their name."""
    rd = run_dir(path)
    out: list[Artefact] = []
    try:
        names = fsio.listdir(rd)
    except OSError:
        return out
    for name in names:
        for pat, kind in _CKPT_NAMES:
            m = pat.search(name)
            if m:
                out.append(Artefact(os.path.join(rd, name), kind, float(m.group(1))))
                break
    return out


def is_artefact(name: str) -> bool:
    """Whether a file or folder name is a checkpoint a run's facts count (its appearance changes them)."""
    return any(pat.search(name) for pat, _ in _CKPT_NAMES)


def collect_facts(path: str, log: LogFile, base: dict[str, Any], companions: Companions,
                  now: float | None = None, live: bool | None = None) -> dict[str, Any]:
    """Run-level facts for judging ``log``: where the run got to, and whether the file still grows.

    ``live`` says whether the run is still being written: ``True`` or ``False`` when the caller knows (``check``
    judges the bytes, so the same files give the same verdict whatever their age; ``check --live`` declares the
    runs live), ``None`` to measure it from the file's age at ``now`` (``watch`` and the server, which follow a
    run while it is written)."""
    facts = dict(base)
    named = {os.path.basename(str(e.detail.get("path", "")).replace("\\", "/")) for e in log.events
             if e.detail.get("path")}
    arts = artefacts(path)
    later: list[tuple[float, str, str]] = []
    log_last = log.facts.get("last_step")
    for a in arts:
        if a.step is not None and os.path.basename(a.path) not in named:
            later.append((a.step, a.kind, a.path))
    for snap in facts.get("snapshots", []):
        step = companions.last_step(snap, "hf-trainer-state")
        if step is not None:
            later.append((step, "snapshot", snap))
    for ev in facts.get("event_dirs", []):
        step = companions.last_step(ev, "tfevents")
        if step is not None:
            later.append((step, "event-file", ev))
    facts["artefacts"] = arts
    facts["named_artefacts"] = named
    facts["companion_logs"] = [companions.log_of(p) for p in facts.get("event_dirs", [])]
    if log_last is not None and later:
        step, kind, where = max(later)
        if step > float(log_last):
            facts.update(log_is_prefix=True, run_last_step=step, run_last_kind=kind, run_last_path=where)
    if live is not None:
        facts["live"] = live
        return facts
    try:
        mtime = fsio.stat(path).st_mtime
    except OSError:
        mtime = None
    if mtime is not None:
        facts["age_s"] = max(0.0, (now if now is not None else time.time()) - mtime)
    return facts
