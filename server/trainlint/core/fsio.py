"""Opening what a user's workspace holds, safely: only regular files are ever read.

A log named ``train.log`` can be a FIFO, a link to ``/dev/stdin`` (the server's own LSP input) or a device
(``/dev/zero``): reading it would hang, steal input or never end. Every reader opens files through
:func:`open_regular`, which opens without blocking, checks the opened descriptor (no race between a check
and the open) and refuses anything but a regular file with a reason a user can act on.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: trainlint does not read it."""


class TooLarge(OSError):
    """The file is larger than trainlint reads for its kind (a whole JSON document): not read at all."""


def open_regular(path: str) -> BinaryIO:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a directory" if stat.S_ISDIR(mode) else "not a file")
            raise NotRegularFile(errno.EINVAL, f"not a regular file: {kind}", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
