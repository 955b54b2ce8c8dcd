"""TensorBoard event files, and directories of them, decoded with tensorboard's Event protobuf.

Records are framed as TFRecords (length, masked CRC-32C, payload, masked CRC-32C). We walk the
framing ourselves because every point must keep its record index and byte offset, and a growing
file must be read from where it was left; tensorboard's compat reader offers neither. The
payload is decoded by ``tensorboard.compat.proto.event_pb2``, and the merge of several files
follows TensorBoard's accumulator: a ``SessionLog.START`` after the first purges earlier points
at or past its step; for files older than format 2, an out-of-order step purges that tag's later
points. What is purged, duplicated or cut short is reported as an event, never dropped silently.
"""

from __future__ import annotations

import math
import os
import re
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import fsio
from ..core.accel import CSCAN
from ..core.fsio import open_regular
from ..core.model import Event, EventKind, LogFile, Series, series_key
from ..core.roles import RoleMap, classify
from .base import Source
from .registry import Detection, FormatSpec

if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct("<QI")
_CRC = struct.Struct("<I")
CHUNK = 4 << 20
MAX_RECORD = 256 << 20
# tensorflow DataType enum values that hold one number.
_DTYPES = {1: "<f", 2: "<d", 3: "<i", 9: "<q", 19: "<e", 4: "<B", 5: "<h", 6: "<b", 17: "<H", 22: "<I", 23: "<Q"}
_DT_STRING = 7
_DT_BFLOAT16 = 14
_SKIP_PLUGINS = {"text", "hparams", "histograms", "images", "audio", "pr_curves", "mesh", "graph_keras_model",
                 "custom_scalars", "projector"}


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _crc_function():  # type: ignore[no-untyped-def]
    try:
        import google_crc32c

        value = google_crc32c.value
        return lambda data: _masked(value(data))
    except ImportError:  # fall back to tensorboard's own (pure Python, slow) implementation
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

        return masked_crc32c


_masked_crc = None


def masked_crc(data: bytes) -> int:
    global _masked_crc
    if _masked_crc is None:
        _masked_crc = _crc_function()
    return _masked_crc(data)


def event_order(name: str) -> tuple[object, ...]:
    """The order event files were written in: their names' numbers compared as numbers. A writer names its file
    ``events.out.tfevents.<seconds>.<host>.<pid>.<counter>``, and the counter of one process passes 9 to 10: a
    plain string sort put the 10th file before the 9th, and a run's continuation before the file it continues."""
    # the split alternates text and digits: the digits (ASCII: a file named with `²` is not a number) at odd places
    return tuple(int(p) if k % 2 else p for k, p in enumerate(re.split(r"([0-9]+)", os.path.basename(name))))


def is_event_file(name: str) -> bool:
    return "tfevents" in os.path.basename(name)


# Keras' TensorBoard callback writes one run as <logdir>/train and <logdir>/validation: one unit, its series
# named by split (validation/epoch_loss is held-out loss).
SPLITS = ("train", "validation", "val", "eval", "test")


def split_dirs(path: str) -> list[str]:
    """The split subfolders of ``path`` that hold event files (at least two, and none in ``path`` itself)."""
    try:
        names = fsio.listdir(path)
    except OSError:
        return []
    if any(is_event_file(n) for n in names):
        return []
    out = [os.path.join(path, n) for n in sorted(names) if n in SPLITS and fsio.isdir(os.path.join(path, n))
           and any(is_event_file(m) for m in fsio.listdir(os.path.join(path, n)))]
    return out if len(out) >= 2 else []


# SummaryWriter.add_scalars("loss", {"train": …, "val": …}) writes each key to a sub-writer <main_tag>_<key>/
# beside the main writer's file: loss_train/, loss_val/ (issue 24). The folder names the split.
_SCALARS_DIR = re.compile(r"^.{1,200}_(?:train|training|val|valid|validation|eval|evaluation|test|dev)$", re.I)


def scalars_dirs(path: str) -> list[str]:
    """The add_scalars sub-writer folders of ``path`` that hold event files (read as members of ``path``)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    out = []
    for n in names:
        sub = os.path.join(path, n)
        if _SCALARS_DIR.match(n) and os.path.isdir(sub):
            try:
                if any(is_event_file(m) for m in os.listdir(sub)):
                    out.append(sub)
            except OSError:
                continue
    return out


@dataclass
class _FileState:
    path: str
    index: int
    offset: int = 0
    record: int = 0
    inode: int = -1
    size: int = -1
    mtime_ns: int = -1
    file_version: float = 0.0
    broken: bool = False   # a header CRC failed: the rest of the file cannot be framed
    prefix: str = ""       # "validation/" for a member of a split subfolder; "<file>/" for an unrelated run
    placed: bool = False   # whether its first scalars decided if it continues the files before it


@dataclass
class _RunState:
    """The accumulator state TensorBoard keeps per run (directory)."""

    seen_start: bool = False
    most_recent_step: float = -math.inf
    last_step: dict[str, float] = field(default_factory=dict)
    first_step: dict[str, float] = field(default_factory=dict)
    plugin: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)


class TensorBoardTail(Source):
    """Reads one event file, or every event file of one directory, from where it was left."""

    def __init__(self, path: str, roles: RoleMap | None = None, log: LogFile | None = None) -> None:
        self.path = path
        self.roles = roles or RoleMap()
        self.log = log or LogFile(path=path, format="tfevents")
        self._files: dict[str, _FileState] = {}
        self._runs: dict[str, _RunState] = {}   # TensorBoard's per-run state, per split subfolder
        self._provisional: list[Event] = []
        self._event_pb2: Any = None
        self._by_tag: dict[str, Series] = {}
        # the points of the records decoded since the last flush, per tag: (series, steps, values, walls, records,
        # offsets), added to their series a batch at a time (_flush) instead of seven array appends a point
        self._pending: dict[str, tuple[Series, list[float], list[float], list[float], list[int], list[int]]] = {}

    def _members(self) -> list[str]:
        if fsio.isdir(self.path):
            dirs = split_dirs(self.path) or [self.path, *scalars_dirs(self.path)]
            return [os.path.join(d, n) for d in dirs for n in sorted(fsio.listdir(d), key=event_order)
                    if is_event_file(n) and fsio.isfile(os.path.join(d, n))]
        return [self.path]

    def restart(self) -> None:
        fresh = LogFile(path=self.path, format="tfevents")
        self.log.__dict__.update(fresh.__dict__)
        self._files.clear()
        self._runs = {}
        self._provisional = []
        self._by_tag = {}
        self._pending = {}

    def update(self, budget: int | None = None) -> bool:
        """Read new records of every member. Raises OSError when the path cannot be read."""
        if self._event_pb2 is None:
            from tensorboard.compat.proto import event_pb2

            self._event_pb2 = event_pb2
        members = self._members()
        if not fsio.exists(self.path):
            raise FileNotFoundError(self.path)
        # A member that vanished, shrank or was replaced invalidates the merge: read all again.
        for p, fs in self._files.items():
            try:
                st = fsio.stat(p)
            except OSError:
                self.restart()
                break
            if st.st_ino != fs.inode or st.st_size < fs.offset:
                self.restart()
                break
        for ev in self._provisional:
            if ev in self.log.events:
                self.log.events.remove(ev)
        self._provisional = []
        changed = False
        for p in members:
            fs = self._files.get(p)
            if fs is None:
                sub = os.path.dirname(p)
                prefix = os.path.basename(sub) + "/" if sub != self.path and fsio.isdir(self.path) else ""
                fs = self._files[p] = _FileState(p, len(self.log.members), prefix=prefix)
                self.log.members.append(p)
            changed |= self._read_file(fs)
        return changed

    def _read_file(self, fs: _FileState) -> bool:
        st = fsio.stat(fs.path)
        if st.st_size == fs.size and st.st_mtime_ns == fs.mtime_ns and st.st_ino == fs.inode:
            return False
        fs.inode, fs.size, fs.mtime_ns = st.st_ino, st.st_size, st.st_mtime_ns
        if fs.broken:
            return False
        with open_regular(fs.path) as f:
            f.seek(fs.offset)
            buf = b""  # bytes from fs.offset on
            while not fs.broken:
                block = f.read(CHUNK)
                if not block:
                    break
                buf += block
                buf = buf[self._frames(buf, fs):]
            if buf and not fs.broken:
                self._partial(buf, fs)
        return True

    def _frames(self, buf: bytes, fs: _FileState) -> int:
        """Decode every complete record in buf (which starts at fs.offset); return bytes consumed."""
        try:
            return self._decode(buf, fs)
        finally:
            self._flush(fs)

    def _flush(self, fs: _FileState) -> None:
        """Add the points decoded since the last flush (all from ``fs``) to their series."""
        for s, steps, values, walls, records, offsets in self._pending.values():
            s.extend_records(steps, values, walls, records, offsets, fs.index)
        self._pending = {}

    def _decode(self, buf: bytes, fs: _FileState) -> int:
        pos = 0
        n = len(buf)
        while pos + 12 <= n:
            if CSCAN is not None:  # framing, CRCs and plain scalar events in C, up to a record it cannot frame
                pos, framed = self._records(buf, pos, fs)
                if framed:
                    continue
            length, hcrc = _HEADER.unpack_from(buf, pos)
            bad_crc = masked_crc(buf[pos:pos + 8]) != hcrc
            if bad_crc or length > MAX_RECORD:
                what = ("fails its header CRC" if bad_crc else
                        f"declares a length of {length} bytes, over the {MAX_RECORD >> 20} MB a record may have")
                self.log.problem(
                    f"{_name(fs)}: record {fs.record} at byte {fs.offset + pos} {what}; the remaining "
                    f"{fs.size - fs.offset - pos} bytes of this file cannot be framed and were not read",
                    record=fs.record)
                fs.broken = True
                fs.offset += pos
                return pos
            end = pos + 12 + length + 4
            if end > n:
                break
            payload = buf[pos + 12:pos + 12 + length]
            (dcrc,) = _CRC.unpack_from(buf, pos + 12 + length)
            if masked_crc(payload) != dcrc:
                self._bad_data(fs, fs.offset + pos)
            else:
                self._event(payload, fs, fs.offset + pos)
            fs.record += 1
            if not fs.record & 8191:  # a batch is 8,192 records at most: the buffers' lists cost more than arrays
                self._flush(fs)
            pos = end
        fs.offset += pos
        return pos

    def _records(self, buf: bytes, pos: int, fs: _FileState) -> tuple[int, bool]:
        """The records the compiled scanner frames from ``pos`` on: the plain scalar events _summary would only
        append it adds to the pending buffers itself; the others come back as items, each handled as _decode's loop
        handles it. Returns where it stopped and whether it framed any (none: the Python loop reads that record)."""
        run = self._run(fs)
        items, end, absorbed, most_recent, top = CSCAN.tf_records(  # type: ignore[union-attr]
            buf, pos, MAX_RECORD, 8192 - (fs.record & 8191), fs.prefix, run.last_step, run.first_step, self._pending,
            fs.record, fs.offset, fs.placed, fs.file_version < 2, run.most_recent_step)
        if absorbed:
            run.most_recent_step = most_recent
            if top > self.log.facts.get("last_step", -math.inf):
                self.log.facts["last_step"] = top
            fs.record += absorbed
            if not fs.record & 8191:
                self._flush(fs)
        for at, wall, step, tags, payload in items:
            if tags is not None:
                self._summary(float(step), wall, tags, payload, fs, fs.offset + at, self._run(fs))
            elif payload is not None:
                self._event(payload, fs, fs.offset + at)
            else:
                self._bad_data(fs, fs.offset + at)
            fs.record += 1
            if not fs.record & 8191:
                self._flush(fs)
        return end, bool(absorbed or items)

    def _bad_data(self, fs: _FileState, offset: int) -> None:
        self.log.problem(f"{_name(fs)}: record {fs.record} at byte {offset} fails its data CRC; skipped",
                         record=fs.record)

    def _run(self, fs: _FileState) -> _RunState:
        run = self._runs.get(fs.prefix)
        if run is None:  # not setdefault: that built a _RunState (four dicts) per record to throw away
            run = self._runs[fs.prefix] = _RunState()
        return run

    def _partial(self, buf: bytes, fs: _FileState) -> None:
        declared = _HEADER.unpack_from(buf, 0)[0] + 16 if len(buf) >= 12 else None
        what = f"{len(buf)} of {declared} bytes" if declared else f"{len(buf)} bytes of a 12-byte header"
        ev = Event(EventKind.TRUNCATED, None, None,
                   f"{_name(fs)} ends in a partial record ({what}); it is not read until it is complete",
                   record=fs.record, offset=fs.offset, file=fs.index,
                   detail={"bytes_present": len(buf), "bytes_declared": declared})
        self.log.events.append(ev)
        self._provisional.append(ev)

    def _event(self, payload: bytes, fs: _FileState, offset: int) -> None:
        try:
            ev = self._event_pb2.Event.FromString(payload)
        except Exception as e:
            self.log.problem(f"{_name(fs)}: record {fs.record} is not an Event ({type(e).__name__}); skipped",
                             record=fs.record)
            return
        what = ev.WhichOneof("what")
        run = self._run(fs)
        if what == "file_version":
            try:
                fs.file_version = float(ev.file_version.split(":")[-1])
            except ValueError:
                fs.file_version = 0.0
            return
        if what == "session_log":
            status = ev.session_log.status
            if status == 1:  # START
                if run.seen_start and fs.file_version >= 2:
                    self._purge(ev.step, None, fs, offset, "a restart (SessionLog.START)")
                run.seen_start = True
            elif status in (2, 3):  # STOP, CHECKPOINT
                kind = EventKind.CHECKPOINT if status == 3 else EventKind.END_OF_RUN
                self.log.events.append(Event(kind, float(ev.step), None, f"SessionLog {ev.session_log.msg}".strip(),
                                             record=fs.record, offset=offset, file=fs.index))
            return
        if what != "summary":
            return
        values = ev.summary.value
        self._summary(float(ev.step), ev.wall_time, [v.tag for v in values], values, fs, offset, run)

    def _summary(self, step: float, wall: float, tags: list[str], values: Any, fs: _FileState, offset: int,
                 run: _RunState) -> None:
        """A summary's points: ``values`` are the floats of the compiled scanner's plain scalar events, or the
        protobuf Summary.Value messages (a plain scalar is read without a call, any other through _scalar)."""
        if not fs.placed:
            run = self._place(tags, step, fs, run)
        if fs.file_version < 2 and step < run.most_recent_step:
            self._purge(step, {fs.prefix + t for t in tags}, fs, offset, "an out-of-order step")
        run.most_recent_step = step
        record = fs.record
        last_step, pending = run.last_step, self._pending
        logged = False
        for v, bare in zip(values, tags, strict=True):
            if isinstance(v, float):
                value = v
            elif v.WhichOneof("value") == "simple_value":  # the common case, without a call
                value = float(v.simple_value)
            else:
                value = self._scalar(v, run)
                if value is None:
                    continue
            tag = fs.prefix + bare if fs.prefix else bare
            prev = last_step.get(tag)
            if prev is not None and step <= prev:
                run.duplicates[tag] = run.duplicates.get(tag, 0) + 1
                if run.duplicates[tag] == 1:
                    self.log.events.append(Event(
                        EventKind.DUPLICATE_STEPS, step, None,
                        f"`{tag}` is logged again at step {step:g} after step {prev:g}; both are kept, in file order",
                        record=fs.record, offset=offset, file=fs.index, detail={"tag": tag}))
            last_step[tag] = step if prev is None or step > prev else prev
            if prev is None:
                run.first_step[tag] = step
            buf = pending.get(tag)
            if buf is None:
                buf = pending[tag] = (self._series(tag), [], [], [], [], [])
            buf[1].append(step)
            buf[2].append(value)
            buf[3].append(wall)
            buf[4].append(record)
            buf[5].append(offset)
            logged = True
        if logged:
            facts = self.log.facts
            if step > facts.get("last_step", -math.inf):
                facts["last_step"] = step

    def _place(self, names: list[str], step: float, fs: _FileState, run: _RunState) -> _RunState:
        """A file that starts again at or before the first step of a tag the files before it logged is another
        run written into the same folder, not their continuation: its series are its own, named by its file.
        A file that starts later continues them (a resume; overlaps are TensorBoard's to purge or keep)."""
        tags = [fs.prefix + t for t in names]
        shared = [t for t in tags if t in run.first_step]
        if not shared:
            fs.placed = not run.first_step  # the first file with scalars starts the run; others wait for a shared tag
            return run
        fs.placed = True
        if all(step > run.first_step[t] for t in shared):
            return run
        fs.prefix = fs.prefix + _name(fs) + "/"
        return self._runs.setdefault(fs.prefix, _RunState())

    def _series(self, tag: str) -> Series:
        s = self._by_tag.get(tag)
        if s is not None:
            return s
        base = classify(tag)
        s = self.log.series.get(series_key(tag, base.aggregation))
        if s is None:
            cls, source = self.roles.classify(tag, base)
            s = Series(tag, cls.role, base.aggregation, cls.component, role_source=source)
            self.log.series[s.key] = s
        self._by_tag[tag] = s
        return s

    def _scalar(self, v: Any, run: _RunState) -> float | None:
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            return float(v.simple_value)
        if kind != "tensor":
            return None
        if v.HasField("metadata") and v.metadata.plugin_data.plugin_name:
            run.plugin.setdefault(v.tag, v.metadata.plugin_data.plugin_name)
        if run.plugin.get(v.tag, "") in _SKIP_PLUGINS:
            return None
        t = v.tensor
        if t.dtype == _DT_STRING or any(d.size > 1 for d in t.tensor_shape.dim):
            return None
        if t.float_val:
            return float(t.float_val[0])
        if t.double_val:
            return float(t.double_val[0])
        if t.int_val:
            return float(t.int_val[0])
        if t.int64_val:
            return float(t.int64_val[0])
        if t.tensor_content:
            if t.dtype == _DT_BFLOAT16 and len(t.tensor_content) >= 2:
                return struct.unpack("<f", b"\x00\x00" + t.tensor_content[:2])[0]
            fmt = _DTYPES.get(t.dtype)
            if fmt and len(t.tensor_content) >= struct.calcsize(fmt):
                return float(struct.unpack_from(fmt, t.tensor_content)[0])
        return None

    def _purge(self, step: float, tags: set[str] | None, fs: _FileState, offset: int, why: str) -> None:
        self._flush(fs)  # the points decoded before the restart are in their series, to be dropped with them
        dropped = 0
        run = self._runs.setdefault(fs.prefix, _RunState())
        for s in self.log.series.values():
            if (tags is not None and s.name not in tags) or (tags is None and s.name not in run.last_step):
                continue
            drop = {i for i, x in enumerate(s.steps) if x >= step}
            if drop:
                dropped += len(drop)
                s.remove_indices(drop)
        for s in self.log.series.values():
            if s.name in run.last_step and (tags is None or s.name in tags):
                if len(s):
                    run.last_step[s.name] = max(s.steps)
                else:
                    del run.last_step[s.name]
        self.log.events.append(Event(
            EventKind.RESTART, step, None,
            f"{why} at step {step:g}: {dropped} earlier points at steps >= {step:g} were dropped, as TensorBoard does",
            record=fs.record, offset=offset, file=fs.index, detail={"dropped": dropped}))


def _name(fs: _FileState) -> str:
    return os.path.basename(fs.path)


# Files whose suffix says text even when "tfevents" is in the name (a log about event files is not one).
_TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".jsonl", ".csv", ".yaml", ".yml", ".log", ".rst", ".toml"}


def _sniff_name(name: str, suffix: str) -> Detection | None:
    if is_event_file(name) and suffix not in _TEXT_SUFFIXES:
        return Detection("tfevents", "TensorBoard event file name")
    return None


def _sniff_dir(path: str) -> Detection | None:
    if any(is_event_file(n) for n in fsio.listdir(path)):
        return Detection("tfevents", "a directory holding TensorBoard event files")
    if split_dirs(path):
        return Detection("tfevents", "a TensorBoard run written as split folders (train/, validation/)")
    return None


FORMAT = FormatSpec(
    "tfevents", "TensorBoard event files (a file, a run folder, or Keras' train/ + validation/ split folders)",
    open=TensorBoardTail, priority=70, sniff_name=_sniff_name, sniff_dir=_sniff_dir,
    globs=("**/events.out.tfevents.*",), activation=("**/events.out.tfevents.*",), binary=True, document=False)
