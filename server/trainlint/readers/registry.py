"""The format registry: each reader module declares one ``FormatSpec``, and everything that must know the formats
is derived from the specs — detection and its order, the suffixes discovery considers, the server's watch globs,
the editor's document patterns and activation events (``trainlint formats --json``, read by the extension's
build), the fuzz seeds and the formats table of the docs.

Why: a new format used to touch nine places in three layers and two languages, and forgetting one of them
(discovery's suffixes) made ``trainlint check DIR`` skip its files silently while ``check FILE`` worked.

Detection runs the specs in ``priority`` order (smaller first), in three passes, because what is cheap and
certain must come before what is a guess: directories (``sniff_dir``), then names (``sniff_name``, before any
byte is read: an event file is claimed by its name), then content (``sniff``, on the file's first 64 KB). A sniff
returns ``None`` to pass, or a ``Detection``; a ``Detection`` whose format is ``None`` is a verdict too (a
``trainer_state.json`` without ``log_history`` is not HF Trainer output) and ends detection.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.fsio import open_regular
from .base import bom_encoding

if TYPE_CHECKING:
    from ..core.roles import RoleMap
    from .base import FormatReader, Source

HEAD_BYTES = 64 << 10
TEXT_SNIFF_BYTES = 1 << 20
MAX_NUL_RUNS = 4  # a crash or a full disk leaves a NUL or a zero-filled block in a text log; a binary file, many


def _nul_runs(data: bytes) -> int:
    """Runs of NUL bytes: one zero-filled region is one run, a binary format's scattered zeros are many."""
    runs, at = 0, data.find(b"\x00")
    while at >= 0 and runs <= MAX_NUL_RUNS:
        runs += 1
        while at < len(data) and data[at] == 0:
            at += 1
        at = data.find(b"\x00", at)
    return runs


@dataclass(frozen=True)
class Detection:
    format: str | None
    reason: str  # why this format, or why not a training log


@dataclass
class Probe:
    """What content sniffs look at: the name, the first ``HEAD_BYTES`` bytes, and more text on demand."""

    path: str
    name: str
    suffix: str
    raw: bytes
    _file: Any = None
    _more: str | None = None

    @property
    def encoding(self) -> str | None:
        """UTF-16 by its byte-order mark (its ASCII is half NUL bytes), else None (UTF-8)."""
        return bom_encoding(self.raw)

    def _decode(self, data: bytes) -> str:
        if self.encoding is not None:
            return data[:len(data) & ~1].decode(self.encoding, "replace").removeprefix("\ufeff")
        return data.decode("utf-8", "replace").replace("\x00", "")  # stray NULs: a crash or a full disk

    @property
    def head(self) -> str:
        return self._decode(self.raw)

    @property
    def binary(self) -> bool:
        """NUL bytes in many places (a binary format); one zero-filled region is a text log a crash cut."""
        if self.encoding is not None:
            return False
        start = self.raw[:4096]
        return b"\x00" in start and (self.suffix == ".wandb" or _nul_runs(start) > MAX_NUL_RUNS)

    def more(self) -> str:
        """Up to ``TEXT_SNIFF_BYTES`` of text (long preambles — env and config dumps — hide text logs)."""
        if self._more is None:
            rest = self._file.read(TEXT_SNIFF_BYTES - HEAD_BYTES) if self._file is not None and len(
                self.raw) == HEAD_BYTES else b""
            self._more = self._decode(self.raw + rest)
        return self._more


@dataclass(frozen=True)
class FormatSpec:
    """One format, declared by its reader module as ``FORMAT`` (or ``FORMATS`` for several)."""

    name: str
    description: str                       # for `trainlint formats` and the docs table
    open: Callable[[str, RoleMap | None], Source]
    priority: int = 100                    # detection order: smaller first
    reader: type[FormatReader] | None = None  # line-based formats: the reader behind the Tail
    sniff: Callable[[Probe], Detection | None] | None = None
    sniff_name: Callable[[str, str], Detection | None] | None = None   # (name, suffix)
    sniff_dir: Callable[[str], Detection | None] | None = None
    suffixes: tuple[str, ...] = ()         # file suffixes discovery considers for this format
    globs: tuple[str, ...] = ()            # watched and opened as documents by the editors
    activation: tuple[str, ...] = ()       # file globs whose presence in a workspace starts the extension
    binary: bool = False                   # no lines: findings go on a text view of its records
    document: bool = True                  # an editor can open it as text and show diagnostics on it
    fuzz_seed: str | None = None           # a fixture of this format (repository-relative) the fuzz test mutates
    extras: dict[str, Any] = field(default_factory=dict)


#: Reader modules that declare no format: the toolkit, readers for other commands (datasets, speech corpora),
#: the `formats:` patterns' reader (custom) and the tracking-server reader (mlflow_rest: an `mlflow:` path, never
#: detected; it imports urllib, which a local check must not pay for).
NOT_FORMATS = frozenset({"base", "registry", "dataset", "speech", "custom", "mlflow_rest"})

_SPECS: tuple[FormatSpec, ...] | None = None


def specs() -> tuple[FormatSpec, ...]:
    """Every declared format, in detection order. Importing the reader modules is the price of one list:
    measured in docs/performance.md (start-up)."""
    global _SPECS
    if _SPECS is None:
        found: list[FormatSpec] = []
        package = importlib.import_module(__package__ or "trainlint.readers")
        for m in pkgutil.iter_modules(package.__path__):
            if m.name in NOT_FORMATS:
                continue
            module = importlib.import_module(f"{package.__name__}.{m.name}")
            declared = getattr(module, "FORMATS", None) or ((module.FORMAT,) if hasattr(module, "FORMAT") else ())
            found.extend(declared)
        names = [s.name for s in found]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"formats declared twice: {sorted(dup)}")
        _SPECS = tuple(sorted(found, key=lambda s: (s.priority, s.name)))
    return _SPECS


def spec(name: str) -> FormatSpec:
    for s in specs():
        if s.name == name:
            return s
    raise KeyError(name)


def format_names() -> tuple[str, ...]:
    return tuple(s.name for s in specs())


def candidate_suffixes() -> frozenset[str]:
    return frozenset(x for s in specs() for x in s.suffixes)


def watch_globs() -> tuple[str, ...]:
    out: list[str] = []
    for s in specs():
        out.extend(g for g in s.globs if g not in out)
    return tuple(out)


def detect_dir(path: str) -> Detection:
    for s in specs():
        if s.sniff_dir is not None:
            d = s.sniff_dir(path)
            if d is not None:
                return d
    return Detection(None, "a directory without event files")


def detect_file(path: str, name: str, suffix: str) -> Detection:
    for s in specs():
        if s.sniff_name is not None:
            d = s.sniff_name(name, suffix)
            if d is not None:
                return d
    with open_regular(path) as f:
        probe = Probe(path, name, suffix, f.read(HEAD_BYTES), f)
        if not probe.raw:
            return Detection(None, "the file is empty")
        for s in specs():
            if s.sniff is not None and (s.binary or not probe.binary):
                d = s.sniff(probe)
                if d is not None:
                    return d
        if probe.binary:
            return binary_detection(suffix)
    return Detection(None, "no training-log pattern in its first 64 KB")


def binary_detection(suffix: str) -> Detection:
    if suffix == ".wandb":
        return Detection(None, "a W&B binary datastore (.wandb), not read yet; trainlint reads the run's stdout "
                               "(files/output.log) and wandb-history.jsonl where present")
    return Detection(None, "a binary file, not a text log")


def as_json() -> list[dict[str, Any]]:
    """The formats for tools outside Python (the extension's build, the docs)."""
    return [{"name": s.name, "description": s.description, "priority": s.priority, "suffixes": list(s.suffixes),
             "globs": list(s.globs), "activation": list(s.activation), "binary": s.binary, "document": s.document}
            for s in specs()]
