"""Logs beyond the machine: ``s3://``, ``gs://``, ``hf://``, ``https://`` (any fsspec protocol), read through
fsspec, the filesystem layer TensorBoard-adjacent and Hugging Face tooling use.

Every reader already reads through :mod:`trainlint.core.fsio`; for a URL, fsio asks this module, which gives a
file-like object whose ``seek`` + ``read`` are ranged requests (a growing log in ``watch`` is read from where it
was left, its head and the end already read compared to notice a rewrite, as on disk), a ``stat`` from the
object's metadata, and folder listings. Run folders are listed with fsspec's ``find``: one listing, not a walk.

Object stores have no inodes and an object is replaced whole when a writer uploads it again, so a remote file's
identity is its content: the reader's check of the head and of the last bytes it read decides whether the new
object continues the old one. Credentials and endpoints are the protocol's own (``AWS_*`` and
``AWS_ENDPOINT_URL`` for S3, ``GOOGLE_APPLICATION_CREDENTIALS`` for GCS, ``HF_TOKEN`` for the Hub).
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

#: protocol -> (the package fsspec needs for it, trainlint's extra that installs it)
EXTRAS = {"s3": ("s3fs", "s3"), "s3a": ("s3fs", "s3"), "gs": ("gcsfs", "gcs"), "gcs": ("gcsfs", "gcs"),
          "hf": ("huggingface_hub", "hub"), "http": ("aiohttp", "http"), "https": ("aiohttp", "http")}
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
BLOCK = 4 << 20   # bytes per ranged request (the readers ask for 4 MB chunks)

_lock = threading.Lock()
_filesystems: dict[str, Any] = {}
#: url -> (when, info): "is it a folder?" asked a dozen times per log in one check costs one request; ``stat``
#: (which decides whether a log grew) always asks the server
_infos: dict[str, tuple[float, dict[str, Any]]] = {}
INFO_TTL_S = 5.0


class MissingExtra(OSError):
    """The protocol's fsspec implementation is not installed: the log is NOT-CHECKED with the install command."""


def is_url(path: str) -> bool:
    return bool(_URL.match(path)) and not path.startswith("file://")


def protocol(url: str) -> str:
    m = _URL.match(url)
    return m.group(1).lower() if m else "file"


def install_hint(proto: str) -> str:
    pkg, extra = EXTRAS.get(proto, (None, None))
    if extra is None:
        return f"reading {proto}:// URLs needs fsspec and its {proto} implementation"
    return f"reading {proto}:// URLs needs {pkg}: pip install 'trainlint[{extra}]'"


def filesystem(url: str) -> Any:
    """The (cached) fsspec filesystem for the URL's protocol; MissingExtra when it cannot be had."""
    proto = protocol(url)
    if _filesystems.get("pid") != os.getpid():  # a forked worker (check --jobs): the parent's event loop is not
        _filesystems.clear()                     # its own; s3fs refuses it ("not fork-safe")
        _filesystems["pid"] = os.getpid()
        _infos.clear()
    with _lock:
        fs = _filesystems.get(proto)
        if fs is not None:
            return fs
        try:
            import fsspec

            fs = fsspec.filesystem(proto)
        except ImportError as e:
            raise MissingExtra(errno.ENOPKG if hasattr(errno, "ENOPKG") else errno.ENOENT, install_hint(proto),
                               url) from e
        except ValueError as e:  # fsspec knows no such protocol
            raise MissingExtra(errno.EINVAL, f"no filesystem for {proto}:// ({e})", url) from e
        _filesystems[proto] = fs
        return fs


@dataclass(frozen=True)
class RemoteStat:
    """What the readers take from os.stat, from an object's metadata (no inode: identity is the content)."""

    st_size: int
    st_mtime: float
    st_mtime_ns: int
    st_ino: int = 0
    st_dev: int = 0


def _info(url: str, fresh: bool = True) -> dict[str, Any]:
    now = time.monotonic()
    if not fresh:
        hit = _infos.get(url)
        if hit is not None and now - hit[0] < INFO_TTL_S:
            return hit[1]
    fs = filesystem(url)
    fs.invalidate_cache(url)  # a listing cached a minute ago does not know the log grew
    try:
        info = fs.info(url)
    except OSError:
        raise
    except Exception as e:  # the protocol's own errors (botocore's, aiohttp's): a read error of this log
        raise OSError(errno.EIO, f"{type(e).__name__}: {str(e)[:200]}", url) from e
    _infos[url] = (now, info)
    return info


def _mtime(info: dict[str, Any]) -> float:
    for key in ("LastModified", "mtime", "updated", "last_modified", "last_commit"):
        v = info.get(key)
        if v is None:
            continue
        if hasattr(v, "timestamp"):
            return float(v.timestamp())
        if isinstance(v, int | float):
            return float(v)
        try:
            from datetime import datetime

            return datetime.fromisoformat(str(v).replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
    return 0.0


def stat(url: str) -> RemoteStat:
    info = _info(url)
    if info.get("type") == "directory":  # a folder is as old as its newest file (a run folder still written)
        fs = filesystem(url)
        try:
            t = max((_mtime(i) for i in fs.ls(url.rstrip("/"), detail=True) if i.get("type") == "file"), default=0.0)
        except Exception:
            t = 0.0
        return RemoteStat(0, t, int(t * 1e9))
    t = _mtime(info)
    return RemoteStat(int(info.get("size") or 0), t, int(t * 1e9))


def isdir(url: str) -> bool:
    try:
        return _info(url, fresh=False).get("type") == "directory"
    except OSError:
        return False


def isfile(url: str) -> bool:
    try:
        return _info(url, fresh=False).get("type") == "file"
    except OSError:
        return False


def exists(url: str) -> bool:
    try:
        _info(url, fresh=False)
        return True
    except OSError:
        return False


def listdir(url: str) -> list[str]:
    fs = filesystem(url)
    fs.invalidate_cache(url)
    base = url.rstrip("/")
    try:
        names = fs.ls(base, detail=False)
    except FileNotFoundError:
        raise
    except Exception as e:
        raise OSError(errno.EIO, f"{type(e).__name__}: {str(e)[:200]}", url) from e
    return sorted({posixpath.basename(str(n).rstrip("/")) for n in names} - {""})


def open_binary(url: str) -> Any:
    """A read-only file-like object whose ``read(n)`` after a ``seek`` is one ranged request of n bytes (no
    read-ahead cache: the readers read the head, the last bytes they read and then what was appended, each once)."""
    fs = filesystem(url)
    info = _info(url, fresh=False)
    if info.get("type") == "directory":
        raise IsADirectoryError(errno.EISDIR, "a folder", url)
    try:
        f = fs.open(url, "rb", block_size=BLOCK, cache_type="none")
        return _NoRangeFallback(f, fs, url) if protocol(url) in ("http", "https") else f
    except OSError:
        raise
    except Exception as e:
        raise OSError(errno.EIO, f"{type(e).__name__}: {str(e)[:200]}", url) from e


def find(url: str, limit: int = 100_000) -> list[tuple[str, int]]:
    """Every file under a folder URL with its size, as URLs (one listing request per page, not a walk)."""
    fs = filesystem(url)
    fs.invalidate_cache(url)
    try:
        found = fs.find(url.rstrip("/"), detail=True)
    except Exception as e:
        if isinstance(e, OSError):
            raise
        raise OSError(errno.EIO, f"{type(e).__name__}: {str(e)[:200]}", url) from e
    out = []
    for name, info in sorted(found.items()):
        if info.get("type", "file") != "file":
            continue
        out.append((fs.unstrip_protocol(name) if not is_url(name) else name, int(info.get("size") or 0)))
        if len(out) >= limit:
            break
    return out


MAX_WHOLE = 256 << 20


class _NoRangeFallback:
    """A web server that ignores ``Range`` (Python's own http.server) is read whole once, up to 256 MB, and
    served from memory; fsspec alone refuses to seek on it."""

    def __init__(self, f: Any, fs: Any, url: str) -> None:
        self._f, self._fs, self._url = f, fs, url
        self._whole: Any = None
        self.size = getattr(f, "size", None)

    def _fallback(self) -> Any:
        if self._whole is None:
            import io

            if isinstance(self.size, int) and self.size > MAX_WHOLE:
                raise OSError(errno.EFBIG, f"the server does not answer ranged reads and the file is over "
                                           f"{MAX_WHOLE >> 20} MB", self._url)
            pos = self._f.tell()
            self._whole = io.BytesIO(self._fs.cat_file(self._url))
            self._whole.seek(pos)
        return self._whole

    def read(self, n: int = -1) -> bytes:
        if self._whole is None:
            try:
                return self._f.read(n)
            except ValueError as e:
                if "range" not in str(e).lower():
                    raise
        return self._fallback().read(n)

    def seek(self, pos: int, whence: int = 0) -> int:
        return (self._whole or self._f).seek(pos, whence)

    def tell(self) -> int:
        return (self._whole or self._f).tell()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _NoRangeFallback:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
