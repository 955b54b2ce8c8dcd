"""The data every part of trainlint speaks: series of points with their source, events, facts.

Series are columnar (``array`` per field) because a log can hold millions of points and a
point object each would cost more memory than the file itself. Column spans are not stored:
a series carries a *locator* that finds its value on a line when a finding or hover needs it,
so parsing stays a line scan and positions are still exact.
"""

from __future__ import annotations

import itertools
import math
import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING

from . import fsio
from .accel import CARRAY
from .fsio import open_regular
from .lines import MAX_MATCH_LINE, split_lines, utf8_line

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

LINE_LOOKUP_BYTES = 16 << 20


class Role(StrEnum):
    TRAIN_LOSS = "train-loss"
    EVAL_LOSS = "eval-loss"
    LR = "learning-rate"
    GRAD_NORM = "grad-norm"
    STEP_TIME = "step-time"
    LOADER_TIME = "loader-time"
    GPU_UTIL = "gpu-util"
    LOSS_SCALE = "loss-scale"          # the fp16 dynamic loss scale (GradScaler, DeepSpeed, Megatron, fairseq)
    SKIPPED = "skipped-steps"          # a count of skipped (overflowed) or NaN iterations the trainer logged
    OTHER = "other"


class Aggregation(StrEnum):
    STEP = "per-step"
    RUNNING = "running-average"
    EPOCH = "epoch-average"
    EVAL = "per-evaluation"
    UNSPECIFIED = "unspecified"


class EventKind(StrEnum):
    CHECKPOINT = "checkpoint"
    BEST_MODEL = "best-model"
    EVALUATION = "evaluation"
    EPOCH = "epoch"
    END_OF_RUN = "end-of-run"
    INTERRUPTED = "interrupted"
    TRACEBACK = "traceback"
    RESUME = "resume"
    RESTART = "restart"
    DUPLICATE_STEPS = "duplicate-steps"
    TRUNCATED = "truncated"
    SKIPPED_STEP = "skipped-step"      # the trainer says it skipped an optimizer step (loss-scale overflow)


NUMBER_RE = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|Infinity|infinity)"


#: ``reserve(array, n)`` of the compiled array room, or None (pure path, or a CPython whose array it refuses)
_reserve = CARRAY.reserve if CARRAY is not None else None


@dataclass(frozen=True, slots=True)
class Locator:
    """Finds the text of one series' value on a source line: a regex with a group named ``v``.

    The regex is compiled when a location is first asked for: a log with 20,000 keys makes 20,000
    locators, and hover or a diagnostic needs a handful of them.
    """

    source: str

    @classmethod
    def compile(cls, regex: str) -> Locator:
        return cls(regex)

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)

    def texts(self, line: str, value: float) -> list[str]:
        """Every token of ``line`` that prints ``value``, as printed: its digits say the precision it was printed
        with. Every one, not the first: a table's locator matches any number, and a row may print the same
        number twice (spaCy's epoch 0 beside a loss of 0.00)."""
        return [m.group("v") for m in self.pattern.finditer(line[:MAX_MATCH_LINE]) if _same_number(m.group("v"), value)]

    def span(self, line: str, value: float | None = None) -> tuple[int, int] | None:
        """0-based [start, end) of the value; None when the line no longer holds it."""
        for m in self.pattern.finditer(line[:MAX_MATCH_LINE]):
            start, end = m.span("v")
            if value is None or _same_number(m.group("v"), value):
                return start, end
        return None


@lru_cache(maxsize=4096)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _same_number(text: str, value: float) -> bool:
    try:
        parsed = parse_number(text)
    except ValueError:
        return False
    if math.isnan(value):
        return math.isnan(parsed)
    if math.isinf(value):
        return parsed == value
    return math.isclose(parsed, value, rel_tol=1e-9, abs_tol=1e-12)


def parse_number(text: str) -> float:
    """A number as logs write it: 1.5, 1e-3, NaN, nan, Infinity, -inf. Raises ValueError."""
    try:
        return float(text)
    except ValueError:
        return float(text.strip().strip('"').strip("'"))


@dataclass(eq=False)
class Series:
    """One named series as the log wrote it. Points are parallel arrays indexed 0..n-1."""

    name: str
    role: Role
    aggregation: Aggregation = Aggregation.UNSPECIFIED
    component: bool = False
    step_basis: str = "step"
    role_source: str = "default"
    locator: Locator | None = None
    member: str | None = None      # the file of a store that keeps one metric per file (MLflow, DVCLive)
    steps: array = field(default_factory=lambda: array("d"))
    values: array = field(default_factory=lambda: array("d"))
    walls: array = field(default_factory=lambda: array("d"))
    lines: array = field(default_factory=lambda: array("I"))  # 4 bytes a point: up to 4 billion lines
    records: array = field(default_factory=lambda: array("q"))
    offsets: array = field(default_factory=lambda: array("q"))
    files: array = field(default_factory=lambda: array("H"))

    @property
    def key(self) -> str:
        k = self.__dict__.get("_key")
        if k is None:
            k = self.__dict__["_key"] = series_key(self.name, self.aggregation)
        return k

    @property
    def label(self) -> str:
        """How a finding names the series: ``loss`` (running-average)."""
        if self.aggregation == Aggregation.UNSPECIFIED:
            return f"`{self.name}`"
        return f"`{self.name}` ({self.aggregation.value})"

    def __len__(self) -> int:
        return len(self.values)

    def append(self, step: float, value: float, line: int = 0, wall: float = math.nan,
               record: int = -1, offset: int = -1, file: int = 0) -> None:
        self.steps.append(step)
        self.values.append(value)
        if wall == wall or self.walls:  # wall-clock times are kept from the first one logged (else none)
            self._walls_to(len(self.values) - 1).append(wall)
        self.lines.append(line)
        if record >= 0 or self.records:
            self.records.append(record)
            self.offsets.append(offset)
            self.files.append(file)

    def extend(self, steps: Sequence[float], values: Sequence[float], lines: Sequence[int], walls: Sequence[float],
               timed: bool | None = None) -> None:
        """Many points at once (text formats only: no records). ``timed=False``: the reader knows every wall time
        is NaN (a CSV without a time column), and the walls are not looked through for one that is not."""
        n = len(self.values)
        if _reserve is not None:
            self._room(n + len(values))
        self.steps.extend(steps)
        self.values.extend(values)
        if self.walls or (timed is not False and any(w == w for w in walls)):
            self._walls_to(n).extend(walls)
        self.lines.extend(lines)

    def extend_records(self, steps: list[float], values: list[float], walls: list[float], records: list[int],
                       offsets: list[int], file: int) -> None:
        """Many points of one event file's records at once, as ``append`` with ``line`` 0 and a ``record`` >= 0
        adds them one by one (seven array appends a point were a third of reading an event file)."""
        n = len(self.values)
        if _reserve is not None:
            self._room(n + len(values))
        self.steps.extend(steps)
        self.values.extend(values)
        if self.walls or any(w == w for w in walls):
            self._walls_to(n).extend(walls)
        self.lines.frombytes(bytes(self.lines.itemsize * len(steps)))  # zeros: a record has no line
        self.records.extend(records)
        self.offsets.extend(offsets)
        self.files.extend([file] * len(steps))

    def _room(self, n: int) -> None:
        """Room for ``n`` points in each array that grows (doubled, `_croom.h`): an array grows by a sixteenth
        otherwise, and each chunk's extend then copied the whole series again (10-12% of the compiled Coqui and
        CSV reads of 100 MB logs). Only arrays in use: most series keep no wall times or records."""
        for a in (self.steps, self.values, self.lines, self.walls, self.records, self.offsets, self.files):
            if a and len(a) < n:  # an empty one: a first extend allocates it at its size, no copy to save
                _reserve(a, n)  # type: ignore[misc]

    def _walls_to(self, n: int) -> array:
        """The wall-clock array, filled with NaN up to ``n`` points (it starts empty: most logs have none)."""
        if len(self.walls) < n:
            self.walls.extend([math.nan] * (n - len(self.walls)))
        return self.walls

    def wall(self, i: int) -> float:
        return self.walls[i] if i < len(self.walls) else math.nan

    def truncate(self, n: int) -> None:
        if n < len(self.values):
            self.__dict__.pop("_stats", None)  # cached measurements described the dropped points
        for arr in (self.steps, self.values, self.walls, self.lines, self.records, self.offsets, self.files):
            if len(arr) > n:
                del arr[n:]

    def remove_indices(self, drop: set[int]) -> None:
        self.__dict__.pop("_stats", None)
        keep = [i for i in range(len(self.values)) if i not in drop]
        for name in ("steps", "values", "walls", "lines", "records", "offsets", "files"):
            arr = getattr(self, name)
            if len(arr):
                setattr(self, name, array(arr.typecode, (arr[i] for i in keep)))


def series_key(name: str, aggregation: Aggregation) -> str:
    return f"{name}\x1f{aggregation.value}"


@dataclass(slots=True)
class Event:
    kind: EventKind
    step: float | None
    line: int | None
    text: str
    record: int | None = None
    offset: int | None = None
    file: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Problem:
    """Something in the file trainlint could not read as it expected. Never a verdict."""

    line: int | None
    message: str
    record: int | None = None


@dataclass(slots=True)
class Location:
    path: str
    line: int | None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    record: int | None = None
    offset: int | None = None


class EventIndex:
    """Where each kind of event sits in ``LogFile.events``, extended over the events appended since the last
    question: a re-judge after one appended record asks "the last interruption", "the checkpoints" without
    walking every event of the log (90,000 in a 100 MB Coqui log: 65 ms of each re-judge).

    Readers append to the list, a provisional tail is cut off and read again, an event file's provisional
    records are removed: so the index remembers which object it saw at each position and, when the list
    changed under it, keeps the longest prefix that is still the same objects (a cut tail costs what was cut)."""

    __slots__ = ("at", "events", "seen")

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.seen: list[Event] = []                 # the object indexed at each position
        self.at: dict[EventKind, list[int]] = {}    # kind -> its positions, ascending

    def update(self) -> None:
        events, seen = self.events, self.seen
        keep = min(len(seen), len(events))
        while keep and events[keep - 1] is not seen[keep - 1]:
            keep -= 1
        if keep < len(seen):
            del seen[keep:]
            for pos in self.at.values():
                while pos and pos[-1] >= keep:
                    pos.pop()
        for i in range(len(seen), len(events)):
            e = events[i]
            seen.append(e)
            pos = self.at.get(e.kind)
            if pos is None:
                pos = self.at[e.kind] = []
            pos.append(i)


class EventsOfKind:
    """A read-only sequence of the events of some kinds, in file order, over the index's positions (no copy
    for one kind)."""

    __slots__ = ("events", "pos")

    def __init__(self, events: list[Event], pos: list[int]) -> None:
        self.events, self.pos = events, pos

    def __len__(self) -> int:
        return len(self.pos)

    def __getitem__(self, i: int) -> Event:
        return self.events[self.pos[i]]

    def __iter__(self) -> Iterator[Event]:
        events = self.events
        return (events[i] for i in self.pos)


@dataclass(eq=False)
class LogFile:
    """Everything read from one log (or one directory of TensorBoard event files)."""

    path: str
    format: str
    series: dict[str, Series] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    # For directories of event files: the member files, in read order.
    members: list[str] = field(default_factory=list)
    # Sparse map line number -> byte offset of that line's start (first line of each chunk read).
    line_index: list[tuple[int, int]] = field(default_factory=list)

    def by_role(self, role: Role) -> list[Series]:
        return [s for s in self.series.values() if s.role == role and len(s)]

    def problem(self, message: str, line: int | None = None, record: int | None = None) -> None:
        self.problems.append(Problem(line, message, record))

    def _event_index(self) -> EventIndex:
        idx = self.__dict__.get("_events_at")
        if not isinstance(idx, EventIndex) or idx.events is not self.events:  # a restart replaced the list
            idx = self.__dict__["_events_at"] = EventIndex(self.events)
        idx.update()
        return idx

    def events_of(self, *kinds: EventKind) -> EventsOfKind:
        """The events of these kinds in file order. O(events appended since the last call), plus the answer's
        length when it names more than one kind."""
        at = self._event_index().at
        lists = [at[k] for k in kinds if at.get(k)]
        pos = lists[0] if len(lists) == 1 else sorted(itertools.chain.from_iterable(lists))
        return EventsOfKind(self.events, pos)

    def last_event_of(self, *kinds: EventKind) -> Event | None:
        """The latest event of these kinds (None when there is none). O(events appended since the last call)."""
        at = self._event_index().at
        i = max((at[k][-1] for k in kinds if at.get(k)), default=-1)
        return self.events[i] if i >= 0 else None

    def line_text(self, line_no: int, path: str | None = None) -> str | None:
        """The text of a 1-based line, read from disk through the sparse line index (or, for a member file of a
        store, ``path``, which is small: read whole)."""
        if path is not None and path != self.path:
            return member_line(path, line_no)
        if not self.line_index or line_no < 1 or fsio.isdir(self.path):
            return None
        i = bisect_right(self.line_index, line_no, key=lambda entry: entry[0]) - 1
        if i < 0:
            return None
        first, offset = self.line_index[i]
        limit = LINE_LOOKUP_BYTES
        if i + 1 < len(self.line_index):  # the chunk ends where the next one starts
            limit = min(limit, self.line_index[i + 1][1] - offset + 1)
        try:
            with open_regular(self.path) as f:
                f.seek(offset)
                block = f.read(limit)
        except OSError:
            return None
        k = line_no - first
        encoding = self.facts.get("_encoding", "utf-8")
        if encoding == "utf-8":  # only the line's bytes decoded (the whole block was 0.13 ms a lookup)
            found = utf8_line(block, k)
            if found is None or (found[1] and len(block) == LINE_LOOKUP_BYTES == limit):
                return None
            return found[0]
        lines = split_lines(block.decode(encoding, "replace").removeprefix("\ufeff"))
        # The last line of the block may be cut short by the read limit: only trust earlier ones.
        if k >= len(lines) or (k == len(lines) - 1 and len(block) == LINE_LOOKUP_BYTES == limit):
            return None
        return lines[k]

    def locate(self, s: Series, i: int, line_text: str | None = None) -> Location:
        """The exact location of point i of series s (column span resolved from the line)."""
        if s.records and s.records[i] >= 0:
            member = self.members[s.files[i]] if self.members else self.path
            return Location(member, None, record=s.records[i], offset=s.offsets[i])
        line = s.lines[i] if len(s.lines) > i else 0
        path = s.member or self.path
        if line <= 0:
            return Location(path, None)
        text = line_text if line_text is not None else self.line_text(line, path)
        if text is not None and s.locator is not None:
            span = s.locator.span(text, s.values[i])
            if span is not None:
                return Location(path, line, span[0] + 1, line, span[1] + 1)
        end = len(text) + 1 if text is not None else None
        return Location(path, line, 1, line, end)


def member_line(path: str, line_no: int, limit: int = LINE_LOOKUP_BYTES) -> str | None:
    """Line ``line_no`` of a small member file (one metric of a store), or None."""
    try:
        with open_regular(path) as f:
            data = f.read(limit)
    except OSError:
        return None
    lines = split_lines(data.decode("utf-8", "replace"))
    return lines[line_no - 1] if 0 < line_no <= len(lines) else None
