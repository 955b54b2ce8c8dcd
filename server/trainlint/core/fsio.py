"""Opening what a user's workspace holds, safely: only regular files are ever read.

A log named ``train.log`` can be a FIFO, a link to ``/dev/stdin`` (the server's own LSP input) or a device
(``/dev/zero``): reading it would hang, steal input or never end. Every reader opens files through
:func:`open_regular`, which opens without blocking, checks the opened descriptor (no race between a check
and the open) and refuses anything but a regular file with a reason a user can act on.

A URL goes to ``core.remote`` (fsspec), imported only then (start-up: a local check never loads fsspec).
"""

from __future__ import annotations

import errno
import os
import stat as _st
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: trainlint does not read it."""


class TooLarge(OSError):
    """The file is larger than trainlint reads for its kind (a whole JSON document): not read at all."""


def _remote(path: str) -> bool:
    """A URL (s3://, gs://, hf://, https://…): read through trainlint.remote (fsspec), imported only then."""
    return "://" in path and not path.startswith("file://")


def open_regular(path: str) -> BinaryIO:
    if _remote(path):
        from .remote import open_binary

        return open_binary(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not _st.S_ISREG(mode):
            kind = ("a pipe (FIFO)" if _st.S_ISFIFO(mode) else "a device" if _st.S_ISCHR(mode) or _st.S_ISBLK(mode)
                    else "a socket" if _st.S_ISSOCK(mode) else "a directory" if _st.S_ISDIR(mode) else "not a file")
            raise NotRegularFile(errno.EINVAL, f"not a regular file: {kind}", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# The file-system questions readers ask, for a local path or a URL alike.
def stat(path: str):  # type: ignore[no-untyped-def]
    if _remote(path):
        from . import remote

        return remote.stat(path)
    return os.stat(path)


def isdir(path: str) -> bool:
    if _remote(path):
        from . import remote

        return remote.isdir(path)
    return os.path.isdir(path)


def isfile(path: str) -> bool:
    if _remote(path):
        from . import remote

        return remote.isfile(path)
    return os.path.isfile(path)


def exists(path: str) -> bool:
    if _remote(path):
        from . import remote

        return remote.exists(path)
    return os.path.exists(path)


def listdir(path: str) -> list[str]:
    if _remote(path):
        from . import remote

        return remote.listdir(path)
    return os.listdir(path)


def size_of(f: BinaryIO) -> int:
    """The size of an open file (a remote one knows it from its metadata)."""
    size = getattr(f, "size", None)
    if isinstance(size, int):
        return size
    return os.fstat(f.fileno()).st_size
