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
import sys
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, compress, islice, repeat
from operator import add, itemgetter, le, lt, methodcaller
from typing import TYPE_CHECKING

from ..core import fsio
from ..core.accel import CSCAN
from ..core.fsio import open_regular
from ..core.model import Event, EventKind, LogFile, Series, series_key
from ..core.roles import RoleMap, classify
from .base import Source
from .registry import Detection, FormatSpec

if TYPE_CHECKING:
    from collections.abc import Sequence
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


def _crc_value():  # type: ignore[no-untyped-def]
    """google_crc32c's unmasked CRC-32C (a C function), or None: the pure-Python plain-record path needs it."""
    try:
        import google_crc32c
    except ImportError:
        return None
    return google_crc32c.value if getattr(google_crc32c, "implementation", "c") == "c" else None


# A plain scalar record as the Python reader's fast path reads it (the compiled scanner's plain scalar event with
# one value): a 12-byte header (a length under 256), then an Event of exactly wall_time (field 1, fixed64), step
# (field 2, a varint of at most 8 bytes: 0 to 2^56 - 1) and a summary (field 5) of one Summary.Value holding a tag
# (field 1) and a simple_value (field 2, fixed32), then the data CRC. Each alternative of the summary spells one tag
# length, so the lengths the summary, the value and the tag declare are the bytes that follow: a match is that
# Event, field for field (`_plain_re`). Groups: header, payload, wall time, step varint, summary head (through the
# value's key), value, data CRC. The header's length and CRCs are checked after the match.
@lru_cache(maxsize=1)
def _plain_re() -> re.Pattern[bytes]:
    """`_PLAIN`, compiled when a pure-Python read first needs it: its 119 alternatives took about 3 ms of every
    `trainlint check`'s start when compiled at import."""
    return re.compile(
        rb"(?s)([\x00-\xff]\x00{7}.{4})(\x09(.{8})\x10([\x80-\xff]{0,7}[\x00-\x7f])(\x2a(?:"
        + b"|".join(re.escape(bytes([n + 9, 10, n + 7, 10, n])) + b".{%d}" % n for n in range(119))
        + rb")\x15)(.{4}))(.{4})")


_GROUPS = re.Match.groups
_LITTLE = sys.byteorder == "little"


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
    plain_from: int = 0    # the record from which the pure reader tries a run of plain records again (_plain)


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
        # the pure-Python run of plain records (_plain): a header's length when its CRC holds (else -1), and a
        # summary head's tag (None: not UTF-8), each worked out once
        self._lengths: dict[bytes, int] = {}
        self._tag_of: dict[bytes, str | None] = {}
        self._run_limit = 8192  # the records a run may match: 4 after a run cut short, doubled after a whole one

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
        plain = CSCAN is None and _crc_c() is not None  # the pure path's runs of plain records need the C CRC
        while pos + 12 <= n:
            if CSCAN is not None:  # framing, CRCs and plain scalar events in C, up to a record it cannot frame
                pos, framed = self._records(buf, pos, fs)
                if framed:
                    continue
            elif plain and fs.placed and fs.record >= fs.plain_from:  # plain records in runs
                end = self._plain(buf, pos, fs)
                if end > pos:
                    pos = end
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

    def _plain(self, buf: bytes, pos: int, fs: _FileState) -> int:
        """The pure-Python reader's fast path, what the compiled scanner does for the plain scalar events: the run of
        plain records (``_plain_re``) from ``pos`` matched by one regular expression in C, then checked and decoded a
        column at a time (headers and tags once per distinct one, the data CRCs by google_crc32c and masked side by
        side in one integer, the steps' varints the same way). The run stops before the first record that fails a
        check, and before the first event _summary would not only append (a step out of order, a step not past its
        tag's last); that record is read by _decode's loop as before. Returns where the run ended (``pos``: none).
        The 100 MB Lightning event file's 2.18 M records read one at a time took 11.9 s of CPU, in runs 5.8 s."""
        # the pending buffers are flushed where _decode flushes them; a run cut short (a duplicate step, a bad CRC)
        # matched records it did not take: the next runs match a few, then twice as many each time they take all
        limit = min(8192 - (fs.record & 8191), self._run_limit)
        ms = list(islice(iter(_plain_re().scanner(buf, pos).match, None), limit))
        k = self._plain_run(pos, fs, ms) if ms else 0
        self._run_limit = min(8192, self._run_limit * 2) if ms and k == len(ms) else 4
        if not k:  # a record the run cannot take: the next 8 are read one at a time before it tries again
            fs.plain_from = fs.record + 8
            return pos
        end: int = ms[k - 1].end()
        return end

    def _plain_run(self, pos: int, fs: _FileState, ms: list[re.Match[bytes]]) -> int:
        """_plain's checks and decoding of the matched records ``ms`` (the first at ``pos``): how many it took."""
        hdrs, payloads, walls, varints, heads, values, crcs = map(list, zip(*map(_GROUPS, ms), strict=True))
        k = _framed(hdrs, payloads, crcs, self._lengths)
        tags = _tags(heads[:k], self._tag_of)
        if None in tags:  # a tag that is not UTF-8: the protobuf path says the record is not an Event
            k = tags.index(None)
            del tags[k:]
        if not k:
            return 0
        steps = array("d", _varints(varints[:k]))
        run = self._run(fs)
        k, groups = _plain_groups(tags, steps, fs, run)
        if not k:
            return 0
        del steps[k:]
        # each record's byte offset in the file: the header, payload and CRC of the ones before it
        at = array("q", accumulate(map(add, map(len, payloads[:k - 1]), repeat(16)), initial=fs.offset + pos))
        cols = (steps, _little("d", walls[:k]), array("d", _little("f", values[:k])), at)
        self._take(fs, run, groups, cols)
        return k

    def _take(self, fs: _FileState, run: _RunState, groups: dict[str, slice | list[int]],
              cols: tuple[array, array, array, array]) -> None:
        """A checked run of plain records into the pending buffers, as _summary appends them one by one: ``groups``
        the records of each tag (in the order the tags first appear), ``cols`` each record's step, wall time, value
        and byte offset in the file."""
        steps, walls, values, at = cols
        k = len(steps)
        records = range(fs.record, fs.record + k)
        pending, last_step, first_step = self._pending, run.last_step, run.first_step
        top = -math.inf
        for bare, sel in groups.items():
            tag = fs.prefix + bare if fs.prefix else bare
            own = _pick(steps, sel)  # strictly rising: its last step is its highest
            if tag not in last_step:
                first_step[tag] = own[0]
            last_step[tag] = own[-1]
            top = max(top, own[-1])
            buf = pending.get(tag)
            if buf is None:
                buf = pending[tag] = (self._series(tag), array("d"), array("d"), array("d"), array("q"), array("q"))
            buf[1].extend(own)
            buf[2].extend(_pick(values, sel))
            buf[3].extend(_pick(walls, sel))
            buf[4].extend(array("q", records[sel] if type(sel) is slice else _picked(records, sel)))
            buf[5].extend(_pick(at, sel))
        run.most_recent_step = steps[k - 1]
        if top > self.log.facts.get("last_step", -math.inf):
            self.log.facts["last_step"] = top
        fs.record += k
        if not fs.record & 8191:
            self._flush(fs)

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


_CRC_VALUE: Any = False  # google_crc32c.value, None without it, False until first asked (`_crc_c`)


def _crc_c():  # type: ignore[no-untyped-def]
    """`_crc_value`, looked up when a pure-Python read first needs it: importing google_crc32c costs 1.7 ms, which
    every `trainlint check` paid when this module was imported (a trainer_state.json's check: 90 -> 97 ms)."""
    global _CRC_VALUE
    if _CRC_VALUE is False:
        _CRC_VALUE = _crc_value()
    return _CRC_VALUE


def _framed(hdrs: list[bytes], payloads: list[bytes], crcs: list[bytes], lengths: dict[bytes, int]) -> int:
    """How many of the matched records, from the first, have a header whose CRC holds and whose length is their
    payload's, and a data CRC that holds: each distinct header checked once (``lengths``: a header's length, -1
    when its CRC fails), the data CRCs compared as arrays."""
    if len(lengths) > 4096:  # a header is one of 256 lengths with its CRC: more is damage
        lengths.clear()
    for h in set(hdrs).difference(lengths):
        length, crc = _HEADER.unpack(h)
        lengths[h] = length if masked_crc(h[:8]) == crc else -1
    k = len(hdrs)
    lens = list(map(len, payloads))
    declared = list(map(lengths.__getitem__, hdrs))
    if declared != lens:
        k = next(i for i, (a, b) in enumerate(zip(declared, lens, strict=True)) if a != b)
    if not k:
        return 0
    got = _masked_all(list(map(_crc_c(), payloads[:k])))
    stored = array("I")
    stored.frombytes(b"".join(crcs[:k]))
    if not _LITTLE:
        stored.byteswap()
    want = array("Q", stored)
    if got != want:
        k = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
    return k


def _tags(heads: list[bytes], tag_of: dict[bytes, str | None]) -> list[str | None]:
    """Each plain summary head's tag (decoded once per distinct head, kept in ``tag_of``), None for one that is not
    UTF-8."""
    if len(tag_of) > 65536:
        tag_of.clear()
    for h in set(heads).difference(tag_of):
        try:
            tag_of[h] = h[6:-1].decode()
        except UnicodeDecodeError:
            tag_of[h] = None
    return list(map(tag_of.__getitem__, heads))


def _lanes(value: int, n: int) -> int:
    """``value`` in each of ``n`` 64-bit lanes of one integer (the lowest lane first)."""
    return int.from_bytes(value.to_bytes(8, "little") * n, "little")


def _from_lanes(x: int, n: int) -> array:
    out = array("Q")
    out.frombytes(x.to_bytes(8 * n, "little"))
    if not _LITTLE:
        out.byteswap()
    return out


def _masked_all(crcs: list[int]) -> array:
    """``_masked`` of every CRC at once: the CRCs side by side in one integer, 64 bits a lane, rotated, offset and
    cut to 32 bits by a few whole-integer operations (no bit crosses a lane: a lane holds 33 bits at most)."""
    n = len(crcs)
    lanes = array("Q", crcs)
    if not _LITTLE:
        lanes.byteswap()
    x = int.from_bytes(lanes.tobytes(), "little")
    y = ((x >> 15) & _lanes(0x1FFFF, n)) | ((x << 17) & _lanes(0xFFFE0000, n))
    return _from_lanes((y + _lanes(0xA282EAD8, n)) & _lanes(0xFFFFFFFF, n), n)


def _varints(varints: list[bytes]) -> array:
    """Protobuf varints of at most 8 bytes, decoded side by side: each padded to a 64-bit lane of one integer, then
    each lane's 7-bit groups moved together by a mask and a shift per byte."""
    n = len(varints)
    x = int.from_bytes(b"".join(map(methodcaller("ljust", 8, b"\0"), varints)), "little")
    y = 0
    for j in range(max(map(len, varints))):
        y |= (x & _lanes(0x7F << 8 * j, n)) >> j
    return _from_lanes(y, n)


def _little(code: str, parts: list[bytes]) -> array:
    """The little-endian numbers (the record's fixed64 wall time: "d"; its float value: "f") of ``parts`` joined."""
    out = array(code)
    out.frombytes(b"".join(parts))
    if not _LITTLE:
        out.byteswap()
    return out


def _pick(col: array, sel: slice | list[int]) -> array:
    """The items of ``col`` a group selects: a slice (a tag every ``step`` records), or their indices."""
    return col[sel] if type(sel) is slice else array(col.typecode, _picked(col, sel))


def _picked(col: Sequence[Any], idx: list[int]) -> tuple[Any, ...]:
    return itemgetter(*idx)(col) if len(idx) > 1 else (col[idx[0]],)


# bytes.translate: 1 at one tag's index (made by concatenation: a generator a byte took 3 ms of every start)
_SELECT = [bytes(j) + b"\x01" + bytes(255 - j) for j in range(256)]


def _plain_groups(tags: list[str], steps: array, fs: _FileState, run: _RunState
                  ) -> tuple[int, dict[str, slice | list[int]]]:
    """How many of the plain records, from the first, _summary would only append (no out-of-order purge, every
    step past its tag's last), and which records each tag has, in the order the tags first appear: a slice when
    the tags repeat in one order (a writer's usual events: the same tags at every step), else their indices."""
    k = len(tags)
    if fs.file_version < 2:  # _summary purges at a step below the one before it
        if steps[0] < run.most_recent_step:
            return 0, {}
        rising = list(map(le, steps, islice(steps, 1, None)))
        if False in rising:
            k = rising.index(False) + 1
            del tags[k:]
    distinct = list(dict.fromkeys(tags))
    n = len(distinct)
    cut = k
    for bare in distinct:  # each tag's first step past its last one
        prev = run.last_step.get(fs.prefix + bare if fs.prefix else bare)
        if prev is not None and not steps[tags.index(bare)] > prev:
            cut = min(cut, tags.index(bare))
    # periodic: record i + n has record i's tag (so the first n records are the n tags, in ``distinct``'s order)
    if tags[n:] == tags[:k - n]:
        after = list(map(lt, steps, islice(steps, n, None)))
        if False in after:
            cut = min(cut, after.index(False) + n)
        return cut, {t: slice(j, cut, n) for j, t in enumerate(distinct) if j < cut}
    groups = _indices(tags, distinct)
    for idx in groups.values():
        own = _picked(steps, idx)
        after = list(map(lt, own, islice(own, 1, None)))
        if False in after:
            cut = min(cut, idx[after.index(False) + 1])
    if cut < k:
        groups = {t: idx[:bisect_left(idx, cut)] for t, idx in groups.items()}
    return cut, {t: idx for t, idx in groups.items() if idx}


def _indices(tags: list[str], distinct: list[str]) -> dict[str, list[int]]:
    """Each tag's record indices: a bytes.translate and an itertools.compress pass in C per tag (up to 256 tags)."""
    if len(distinct) > 256:
        groups: dict[str, list[int]] = {t: [] for t in distinct}
        for i, t in enumerate(tags):
            groups[t].append(i)
        return groups
    ids = bytes(map({t: j for j, t in enumerate(distinct)}.__getitem__, tags))
    return {t: list(compress(range(len(tags)), ids.translate(_SELECT[j]))) for j, t in enumerate(distinct)}


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
