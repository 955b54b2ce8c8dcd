"""Event files for tests, written with tensorboard's own writer (no hand-made protobuf)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


def scalar_event(step: int, tag: str, value: float, wall: float | None = None) -> event_pb2.Event:
    return event_pb2.Event(step=step, wall_time=1_000.0 + step if wall is None else wall,
                           summary=summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)]))


def write(logdir: str, events: Iterable[event_pb2.Event], suffix: str = "") -> str:
    """Write one event file into logdir; return its path."""
    before = set(os.listdir(logdir)) if os.path.isdir(logdir) else set()
    w = EventFileWriter(logdir, filename_suffix=suffix)
    for ev in events:
        w.add_event(ev)
    w.close()
    [new] = set(os.listdir(logdir)) - before
    return os.path.join(logdir, new)


def restart_event(step: int) -> event_pb2.Event:
    return event_pb2.Event(step=step, wall_time=2_000.0 + step,
                           session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))


def record_offsets(path: str) -> list[int]:
    """Byte offset of every record (for cutting files in tests)."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        out.append(pos)
        pos += 12 + n + 4
    return out
