"""The one door to every reader: detection (from the format registry) and opening.

``open_source(path)`` returns something with ``.log`` and ``.update()``: call ``update()`` again when the file
changed and only the new bytes are read. ``read(path)`` is a cold read. Which formats exist, how each is
recognised and in which order is declared by the reader modules themselves (``registry.py``).
"""

from __future__ import annotations

import os
from typing import Any

from ..core import fsio
from ..core.fsio import open_regular
from ..core.model import LogFile
from ..core.roles import RoleMap
from .base import Source, Tail
from .registry import HEAD_BYTES, TEXT_SNIFF_BYTES, Detection, detect_dir, detect_file, format_names, spec, specs

__all__ = ["HEAD_BYTES", "TEXT_SNIFF_BYTES", "Detection", "NotALog", "Source", "binary_formats", "detect",
           "formats", "open_source", "read", "read_tail"]


class NotALog(Exception):
    """The path is readable but is not a training log trainlint knows."""


# What reading one file can raise: each is that file's NOT-CHECKED, never the end of a scan (ArithmeticError: an
# integer past the double range, 401 digits in a JSON line, which float() refuses).
READ_ERRORS = (NotALog, OSError, ImportError, RecursionError, MemoryError, ValueError, UnicodeError, ArithmeticError)


def formats() -> tuple[str, ...]:
    """Every format name, in detection order."""
    return format_names()


def binary_formats() -> tuple[str, ...]:
    """Formats without lines: their findings go on a text view of their records (event files, a database)."""
    return tuple(s.name for s in specs() if s.binary)


def detect(path: str) -> Detection:
    """Directory, then name, then content. Raises OSError when the path cannot be read."""
    if fsio.isdir(path):
        return detect_dir(path)
    name = os.path.basename(path.rstrip("/"))
    return detect_file(path, name, os.path.splitext(name)[1].lower())


def open_source(path: str, fmt: str | None = None, roles: RoleMap | None = None, user: Any = None) -> Source:
    """A reader positioned at the start of ``path``. Raises NotALog or OSError. ``user`` is the matching
    ``formats:`` entry of the configuration (readers.custom.UserFormat), which wins over detection."""
    if user is not None and fmt in (None, "custom"):
        from .custom import CustomReader  # start-up: only for a file a `formats:` entry claims

        log = LogFile(path=path, format="custom")
        return Tail(path, CustomReader(log, roles, user.patterns))
    if fmt == "custom":
        raise NotALog("no `formats:` entry of the configuration matches this file")
    if fmt == "mlflow-rest" or (fmt is None and path.startswith("mlflow:")):  # a tracking server's run
        from .mlflow_rest import MlflowRestTail  # start-up: only for an mlflow: path

        return MlflowRestTail(path, roles)
    if fmt is None:
        d = detect(path)
        if d.format is None:
            raise NotALog(d.reason)
        fmt = d.format
    try:
        opener = spec(fmt).open
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(formats())}") from None
    return opener(path, roles)


def read(path: str, fmt: str | None = None, roles: RoleMap | None = None) -> LogFile:
    src = open_source(path, fmt, roles)
    src.update()
    return src.log


def read_tail(path: str, fmt: str, nbytes: int) -> LogFile:
    """The series of the last ``nbytes`` of a text log (from its first complete line there): the last steps of a
    per-rank log's peers, without reading them whole."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - nbytes))
        data = f.read(nbytes)
    if size > nbytes:
        data = data[data.find(b"\n") + 1:]
    log = LogFile(path=path, format=fmt)
    reader_cls = spec(fmt).reader
    if reader_cls is None:
        raise ValueError(f"{fmt} is not a line-based format")
    reader = reader_cls(log)
    reader.scan(data.decode("utf-8", "replace"), 1)
    reader.finish()
    return log
