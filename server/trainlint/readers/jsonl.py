"""JSON-lines logs: detectron2 ``metrics.json``, mmengine ``scalars.json``, LLaMA-Factory
``trainer_log.jsonl``, W&B ``wandb-history.jsonl``, DETR ``log.txt`` and generic files.

Each line is one object; every numeric top-level key is a series. Strings and booleans where a number belongs
are reported once per key, never judged; the strings ``"nan"``, ``"NaN"``, ``"inf"``, ``"-inf"``, ``"Infinity"``
are the non-finite values they spell (writers without ``allow_nan`` quote them).

``null`` is an absent value (LLaMA-Factory writes ``"eval_loss": null`` on every line and ``"loss": null`` on its
closing summary), except when a key that held numbers is null on ``NULL_RUN`` lines in a row: then it is what
orjson, JavaScript and pandas write for NaN, and those nulls are read as NaN (a problem says so), until a number
comes back.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING

from ..core.accel import CJSONL
from ..core.lines import split_lines
from ..core.model import Aggregation, Event, EventKind, LogFile, Role
from ..core.roles import Classified, RoleMap, classify
from ..core.values import as_double
from .base import FormatReader, line_format
from .hf_trainer_state import json_key_locator
from .registry import Detection, FormatSpec, Probe

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# Keys that index a line rather than measure anything, per writer.
STEP_KEYS = ("current_steps", "iteration", "global_step", "step", "_step", "iter", "epoch")
NOT_SERIES = {"current_steps", "total_steps", "percentage", "eta_seconds", "_runtime", "_timestamp",
              "elapsed_time", "remaining_time", "n_parameters", "iteration", "global_step", "step", "_step",
              "iter", "epoch"}
# detectron2 and mmengine write seconds per iteration as ``time`` and loader seconds as ``data_time``.
TIMING = {"time": Classified(Role.STEP_TIME, Aggregation.STEP),
          "data_time": Classified(Role.LOADER_TIME, Aggregation.STEP)}
MAX_REPORTED = 5
BATCH = 8192
PIECE = 1 << 19  # characters of text the pure path decodes at a time (`JsonlReader._scan_flat`)
NULL_RUN = 3  # nulls in a row, after numbers, that are read as NaN
_ABSENT = object()
_NANS = array("d", [math.nan])
_NONFINITE = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
              "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}

_SCAN = json.JSONDecoder().scan_once  # json.loads' scanner: (the value, where it ends) from an index
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


@dataclass
class _State:
    flavour: str | None = None
    index: int = 0
    bad_keys: set[str] = field(default_factory=set)
    bad_lines: int = 0
    numbered: set[str] = field(default_factory=set)      # keys that have held a number
    null_runs: dict[str, list[tuple[float, int, float]]] = field(default_factory=dict)  # (step, line, wall)
    null_nan: set[str] = field(default_factory=set)      # keys whose nulls are NaN until a number comes back
    null_noted: set[str] = field(default_factory=set)


class JsonlReader(FormatReader):
    format = "jsonl"
    chunk = None if CJSONL is not None else 1 << 20  # the pure read's pieces of a chunk held in the caches

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()

    def scan(self, text: str, first_line: int) -> None:
        """The chunk's plain lines read where they are (the compiled scanner's columns, or the pure path's pieces
        decoded by json.loads); the rest split into lines and decoded a batch at a time, else line by line."""
        if CJSONL is not None:  # the compiled scanner reads the chunk's plain lines where they are
            pos, first_line = self._scan_text(text, first_line)
        else:  # the pure path reads the chunk's lines that are one object each without splitting it
            pos, first_line = self._scan_flat(text, first_line)
        if pos >= len(text):
            return
        if pos:
            text = text[pos:]  # the rest of the chunk is split and read as before, from the same batch boundary
        lines = split_lines(text)
        stripped = CJSONL is not None and CJSONL.no_blank(lines)  # the scanner strips lines itself
        raws = lines if stripped else list(map(str.strip, lines))
        if stripped or all(raws):  # no blank line: the line numbers are a range, made an array once a batch
            numbers: Sequence[int] = range(first_line, first_line + len(raws))
        else:
            numbers = [first_line + i for i, raw in enumerate(raws) if raw]
            raws = [raw for raw in raws if raw]
        for k in range(0, len(raws), BATCH):  # batches bound the memory the decoded objects take
            # an array: each series' lines extend from it as one copy (a list: an int conversion a point)
            self._batch(raws[k:k + BATCH], array("I", numbers[k:k + BATCH]), stripped)

    def _scan_text(self, text: str, line: int) -> tuple[int, int]:
        """The chunk's batches of plain lines read by the compiled scanner in the text itself (splitting it into
        a str a line was a tenth of the read): (where the first batch it leaves starts, that batch's first line).
        It leaves a batch with a blank line, a carriage return, a non-ASCII character or a line that is not a
        plain flat object, and the rest of the chunk, to ``scan``'s split: the batches start at the same lines."""
        pos, n = 0, len(text)
        while pos < n:
            got = CJSONL.columns_text(text, pos, line, BATCH, NOT_SERIES)  # type: ignore[union-attr]
            cols = None if got is None else _Cols.checked(*got[2])
            if cols is None:
                break
            numbers = array("I")
            numbers.frombytes(got[1])
            self._take(cols, numbers)
            pos, line = got[0], line + len(numbers)
        return pos, line

    def _scan_flat(self, text: str, line: int) -> tuple[int, int]:
        """The chunk's lines read without a str a line while each is one object (splitting, stripping and joining
        them was a quarter of the pure read): a piece of about PIECE characters at a time, its lines checked by
        `_flat_count`, decoded by one json.loads, its objects handed on in the batches of BATCH lines ``scan``'s
        split makes, with the same lines. (Where the first batch it leaves starts, that batch's first line): a
        piece it cannot read so, and the rest of the chunk, go to the split from that batch's first line. json.loads
        is called where `_batch` calls it (the same depth of calls: a deeply nested line fails, or not, as there).
        A piece, not the chunk at once: a whole 4 MB chunk's objects took memory the process was given anew for
        each chunk (decoding a 100 MB log: 0.80 s and 88,000 page faults by chunks, 0.65 s and none by pieces)."""
        n, pos, done = len(text), 0, 0
        pending: list[dict[str, Any]] = []  # the objects decoded and not handed on: the lines just before pos
        while pos < n:
            end = text.rfind("\n", pos, pos + PIECE) + 1 if pos + PIECE < n else n
            if end <= pos:  # a line longer than a piece: the piece is that line
                end = text.find("\n", pos + PIECE) + 1 or n
            piece = text[pos:end]
            m = _flat_count(piece)
            if not m:
                break
            try:  # each line break a comma, and a 0 after the last line's (the array's last value, taken off below)
                got = json.loads("".join(("[", piece.replace("\n", ","), "0]" if piece.endswith("\n") else ",0]")))
            except (ValueError, RecursionError):
                break
            if type(got.pop()) is not int or len(got) != m or set(map(type, got)) != {dict}:
                break
            pending += got
            pos = end
            while len(pending) >= BATCH or (pending and pos >= n):
                batch, pending = pending[:BATCH], pending[BATCH:]
                self._objects(batch, array("I", range(line + done, line + done + len(batch))))
                done += len(batch)
        for _ in pending:  # back to the first line not handed on (pos is just after a line break)
            pos = text.rfind("\n", 0, pos - 1) + 1
        return pos, line + done

    def _take(self, cols: _Cols, numbers: array) -> None:
        """A batch the compiled scanner read as columns."""
        st: _State = self.state
        if st.flavour is None:
            st.flavour = _flavour(cols.first())
            self.log.facts["flavour"] = st.flavour
        self._columns(cols, numbers, st)

    def _batch(self, raws: list[str], numbers: array, unstripped: bool = False) -> None:
        cols = _Cols.of(raws) if CJSONL is not None else None  # plain flat lines as columns, in C
        if cols is not None:
            self._take(cols, numbers)
            return
        if unstripped:
            raws = list(map(str.strip, raws))
        try:
            text = _array_text(raws)
            objs = json.loads(text) if _flat_lines(text, len(raws)) else _each_line(raws)
        except (ValueError, RecursionError):  # a line nested past the decoder's depth: line by line says which
            objs = None
        if objs is not None and len(objs) == len(raws) and objs and set(map(type, objs)) == {dict}:
            self._objects(objs, numbers)
        else:
            self._line_by_line(raws, numbers)

    def _objects(self, objs: list[dict[str, Any]], numbers: array) -> None:
        """A batch's lines, one object each."""
        st: _State = self.state
        if st.flavour is None:
            st.flavour = _flavour(objs[0])
            self.log.facts["flavour"] = st.flavour
        b = _Objs(objs)
        if b.keys is None and _sparse(objs, b.union):  # keys the same on every line: not sparse
            for obj, line in zip(objs, numbers, strict=True):
                self._record(obj, line, st)
        else:
            self._columns(b, numbers, st)

    def _columns(self, b: _Objs | _Cols, lines: array, st: _State) -> None:
        """The same as ``_record`` per object, a column at a time (C-level comprehensions, or the compiled
        scanner's columns)."""
        log = self.log
        first = _step_key(b.first())
        step_nums, step_col = b.column(first) if first else (None, None)
        uniform = step_nums is not None
        if uniform:
            step_keys = [first] * b.n
            steps = b.objects(first, step_col)
            if type(step_nums) is not array:  # one conversion: each series' steps extend from it as one copy
                step_nums = array("d", step_nums)
        else:
            objs = b.objs  # type: ignore[union-attr]  # _Cols.of declines a batch without one numeric step key
            step_keys = [_step_key(o) for o in objs]
            pairs = enumerate(zip(objs, step_keys, strict=True))
            steps = step_nums = [as_double(o[k]) if k else float(st.index + i) for i, (o, k) in pairs]
        st.index += b.n
        walls = b.walls()
        timed = None if b.timed() else False  # no line has a wall time: the series need not look for one
        total = b.last_number("total_steps")
        if total is not None:
            log.facts["max_steps"] = total
        if st.flavour == "detectron2":
            for i in b.rows_without_loss():
                log.events.append(Event(EventKind.EVALUATION, steps[i], lines[i], "evaluation"))
        for key in b.key_order():
            if key in NOT_SERIES or (uniform and key == first):
                continue
            nums, col = b.column(key)
            if nums is not None and uniform:
                s = self._series_of(key, "step")
                s.extend(step_nums, nums, lines, walls, timed)  # array("d") takes ints and floats alike
                self._numbered(key)
                continue
            if key not in st.numbered and b.only_null(key, col):
                continue  # every null of a key that never held a number is an absent value
            self._mixed(key, b, col, (steps, step_nums, lines, walls, timed), step_keys, uniform)
        log.facts["last_step"] = steps[-1]

    def _mixed(self, key: str, b: _Objs | _Cols, col: list[Any] | None, at: _At, step_keys: list[str | None],
               uniform: bool) -> None:
        """One column that holds more than numbers (nulls, strings, absent values): the values that are not numbers
        one by one, the runs of numbers between them at once when every line has the same step key."""
        steps, step_nums, lines, walls, timed = at
        out = (array("d"), array("d"), array("I"), array("d"))  # the points, as the series will hold them
        basis = None
        if uniform:
            k = step_keys[0]
            here = "epoch" if k == "epoch" else "step"
            values, prev = b.values_of(key, col), 0
            for j, v in [*b.not_numbers(key, col), (b.n, None)]:
                if j > prev:  # a run of numbers
                    self._numbered(key)
                    basis = basis or here
                    for acc, src in zip(out, (step_nums, values, lines, walls), strict=True):
                        if type(src) is list:  # json.loads' values: fromlist converts them in one C loop, extend
                            acc.fromlist(src[prev:j])  # goes through an iterator (twice the time)
                        else:
                            acc.extend(src[prev:j])
                if j < b.n and self._cell(key, v, j, (steps, lines, walls), out):
                    basis = basis or here
                prev = j + 1
        else:
            col = b.objects(key, col)
            for i, v in enumerate(col):
                if v is _ABSENT or step_keys[i] == key:
                    continue  # a key that is another object's step key is not a value there
                k = step_keys[i]
                here = "epoch" if k == "epoch" else ("index" if k is None else "step")
                if self._cell(key, v, i, (steps, lines, walls), out):
                    basis = basis or here
        if out[0]:
            self._series_of(key, basis or "step").extend(*out, timed)

    def _cell(self, key: str, v: Any, i: int, at: tuple[Sequence[float], array, Sequence[float]],
              out: tuple[array, array, array, array]) -> bool:
        """Line i's value of ``key`` into ``out``: whether it added points (a number, a non-finite string, a run
        of nulls read as NaN)."""
        if v is _ABSENT:
            return False
        steps, lines, walls = at
        if v is None:
            points = self._null(key, steps[i], lines[i], walls[i])
            for point in points:
                for acc, x in zip(out, point, strict=True):
                    acc.append(x)
            return bool(points)
        f = as_double(v) if type(v) in _NUMBER_TYPES else _nonfinite(v)
        if f is None:
            self._not_a_number(key, v, lines[i])
            return False
        self._numbered(key)
        for acc, x in zip(out, (steps[i], f, lines[i], walls[i]), strict=True):
            acc.append(x)
        return True

    def _line_by_line(self, raws: list[str], numbers: array) -> None:
        st: _State = self.state
        loads = json.loads
        for line, raw in zip(numbers, raws, strict=True):
            try:
                obj = loads(raw)
            except ValueError as e:
                self._bad(line, f"line {line} is not valid JSON ({getattr(e, 'msg', e)}); skipped")
                continue
            except RecursionError:
                self._bad(line, f"line {line} is nested deeper than the JSON decoder reads; skipped")
                continue
            if not isinstance(obj, dict):
                self._bad(line, f"line {line} is valid JSON but not an object ({type(obj).__name__}); skipped")
                continue
            if st.flavour is None:
                st.flavour = _flavour(obj)
                self.log.facts["flavour"] = st.flavour
            self._record(obj, line, st)

    def _bad(self, line: int, message: str) -> None:
        st: _State = self.state
        st.bad_lines += 1
        if st.bad_lines <= MAX_REPORTED:
            self.log.problem(message, line)
        elif st.bad_lines == MAX_REPORTED + 1:
            self.log.problem("more lines could not be read; only the first 5 are listed", line)

    def _record(self, obj: dict[str, Any], line: int, st: _State) -> None:
        log = self.log
        step_key = next((k for k in STEP_KEYS if _num(obj.get(k)) is not None), None)
        step = as_double(obj[step_key]) if step_key else float(st.index)
        basis = "epoch" if step_key == "epoch" else ("index" if step_key is None else "step")
        st.index += 1
        total = _num(obj.get("total_steps"))
        if total is not None:
            log.facts["max_steps"] = total
        wall = _num(obj.get("_timestamp"))
        wall = math.nan if wall is None else wall
        is_eval = st.flavour == "detectron2" and not any(k.endswith("loss") for k in obj)
        if is_eval:
            log.events.append(Event(EventKind.EVALUATION, step, line, "evaluation"))
        for key, value in obj.items():
            if key in NOT_SERIES or key == step_key:
                continue
            if value is None:
                points = self._null(key, step, line, wall)
                if points:
                    s = self._series_of(key, basis)
                    for point in points:
                        s.append(*point)
                continue
            v = _num(value)
            if v is None:
                v = _nonfinite(value)
            if v is None:
                self._not_a_number(key, value, line)
                continue
            self._numbered(key)
            self._series_of(key, basis).append(step, v, line, wall)
        log.facts["last_step"] = step

    def _series_of(self, key: str, basis: str):  # type: ignore[no-untyped-def]
        default = TIMING.get(key) if self.state.flavour in ("detectron2", "mmengine") else None
        return self.series(key, default, locator=json_key_locator(key), step_basis=basis)

    def _not_a_number(self, key: str, value: Any, line: int) -> None:
        st: _State = self.state
        if isinstance(value, str | bool) and key not in st.bad_keys and classify(key).role != Role.OTHER:
            st.bad_keys.add(key)
            self.log.problem(f"`{key}` is {type(value).__name__} {value!r}, not a number; such values are ignored",
                             line)

    def _numbered(self, key: str) -> None:
        st: _State = self.state
        st.numbered.add(key)
        if st.null_runs:
            st.null_runs.pop(key, None)
        st.null_nan.discard(key)

    def _null(self, key: str, step: float, line: int, wall: float) -> list[tuple[float, float, int, float]]:
        """The NaN points a ``null`` of ``key`` gives: none while it may be an absent value, the whole run of
        nulls once it reaches NULL_RUN lines after numbers (and each later null until a number comes back)."""
        st: _State = self.state
        if key not in st.numbered:
            return []
        if key in st.null_nan:
            return [(step, math.nan, line, wall)]
        run = st.null_runs.setdefault(key, [])
        run.append((step, line, wall))
        if len(run) < NULL_RUN:
            return []
        del st.null_runs[key]
        st.null_nan.add(key)
        if key not in st.null_noted:
            st.null_noted.add(key)
            self.log.problem(f"`{key}` held numbers, then is null on {NULL_RUN} lines in a row from line {run[0][1]}; "
                             "these nulls are read as non-finite values (NaN written as null), until a number "
                             "comes back", run[0][1])
        return [(s, math.nan, ln, w) for s, ln, w in run]


_NUMBER_TYPES = {int, float}
_NULL_TYPES = {type(None), object}  # a null, or _ABSENT
# A batch's columns for one key: steps (as read: ints stay ints), steps as doubles, lines, wall times, and
# ``timed`` (False: no line of the batch has a wall time).
_At = tuple["Sequence[float]", "Sequence[float]", array, "Sequence[float]", "bool | None"]


class _Objs:
    """A batch as json.loads decoded it: one dict per line. When every line has the first line's keys (every
    writer's common shape) a column is one ``map`` of ``itemgetter`` in C, checked and converted to doubles by one
    ``array("d")``, a null-only one told by ``list.count``: a pass of bytecode a line per key (``dict.get``, a set
    comprehension of types, the line lists of ``not_numbers`` and ``walls``) was 0.44 s of the 1.56 s read."""

    def __init__(self, objs: list[dict[str, Any]]) -> None:
        self.objs = objs
        self.n = len(objs)
        self.union = set().union(*objs)  # every key of the batch
        n = len(objs[0])
        # the first line's keys, when every line has them and no other (as many keys, none outside the union)
        self.keys: list[str] | None = list(objs[0]) if len(self.union) == n and set(map(len, objs)) == {n} else None
        self._types: dict[str, set[type]] = {}  # the types of a column column() made
        self._kinds: dict[str, list[type]] = {}  # and its type a line, for not_numbers

    def first(self) -> dict[str, Any]:
        return self.objs[0]

    def key_order(self) -> list[str]:
        """The first line's keys in its order, then the others sorted."""
        if self.keys is not None:
            return list(self.keys)
        keys = dict.fromkeys(self.objs[0])
        for k in sorted(self.union - keys.keys()):
            keys[k] = None
        return list(keys)

    def column(self, key: str) -> tuple[Sequence[Any] | None, Sequence[Any]]:
        """(the values if every line holds a number there, else None; the values, _ABSENT where a line has none).
        The numbers are an array: ``array("d")`` takes every int and float and refuses any other value json.loads
        makes but a boolean (``True in col`` is rare and cheap: a test of identity first), so a column of numbers
        is checked and converted by one C call, not a type per line."""
        if self.keys is None:
            col: list[Any] = [o.get(key, _ABSENT) for o in self.objs]
        else:
            col = list(map(itemgetter(key), self.objs))
            try:
                nums = array("d", col)
            except (TypeError, OverflowError):  # a null, a string, a nested value; an int past a double's range
                if col[0] is None and col.count(None) == self.n:  # only nulls (a test of identity a line)
                    self._types[key] = {type(None)}
                    return None, col
            else:
                if not (True in col or False in col):  # else 1 or 0 may be a boolean: the types say
                    return nums, col
        kinds = self._kinds[key] = list(map(type, col))
        types = self._types[key] = set(kinds)
        if not types <= _NUMBER_TYPES:
            return None, col
        try:  # array.extend takes a list of ints and floats as array("d") does: a number past its range raises
            return array("d", col), col
        except OverflowError:
            return array("d", map(as_double, col)), col

    def objects(self, key: str, col: list[Any]) -> list[Any]:
        return col

    def values_of(self, key: str, col: list[Any]) -> list[Any]:
        return col

    def not_numbers(self, key: str, col: Sequence[Any]) -> list[tuple[int, Any]]:
        """(line, value) of each line whose value is not a number (_ABSENT where it has none)."""
        types = self._kinds.get(key)
        if types is None:
            types = list(map(type, col))
        kinds = self._types.get(key)
        if kinds is None:
            kinds = set(types)
        at: list[int] = []
        for t in kinds - _NUMBER_TYPES:  # each kind's lines found by list.index in C, not a test per line in bytecode
            i = types.index(t)
            while True:
                at.append(i)
                try:
                    i = types.index(t, i + 1)
                except ValueError:
                    break
        return [(i, col[i]) for i in sorted(at)]

    def only_null(self, key: str, col: Sequence[Any]) -> bool:
        if self.keys is not None:
            return col.count(None) == len(col)  # a test of identity a line
        return set(map(type, col)) <= _NULL_TYPES

    def timed(self) -> bool:
        return "_timestamp" in self.union

    def walls(self) -> Sequence[float]:
        if not self.timed():
            return _NANS * self.n  # an array: a run of points is one copy of its slice
        return [as_double(w) if type(w) in (int, float) else math.nan for w in (o.get("_timestamp") for o in self.objs)]

    def last_number(self, key: str) -> float | None:
        for o in reversed(self.objs):
            v = _num(o.get(key))
            if v is not None:
                return v
        return None

    def rows_without_loss(self) -> list[int]:
        return [i for i, o in enumerate(self.objs) if not any(k.endswith("loss") for k in o)]


_SKIPPED = {4: "", 5: True, 6: False}  # a value of that kind's type
_NUMBER_KINDS = bytes([1, 2])  # _cjsonl's kinds: 0 absent, 1 int, 2 float, 3 null, 4 str, 5 true, 6 false
_NULL_KINDS = bytes([0, 3])


class _Cols:
    """A batch as the compiled scanner read it: per key, a kind and a double per line (``_cjsonl.columns``)."""

    def __init__(self, n: int, keys: list[str], kinds: list[bytes], values: list[bytes],
                 others: list[list[Any] | None]) -> None:
        self.n = n
        self.index = {k: i for i, k in enumerate(keys)}
        self.kinds, self.values, self.others = kinds, values, others
        self._keys = keys
        self._first: dict[str, Any] | None = None

    @classmethod
    def of(cls, raws: list[str]) -> _Cols | None:
        """The batch's columns, or None for json.loads to read it: a line that is not a plain flat object, keys
        that change from line to line (``_sparse``), or no numeric step key on every line."""
        got = CJSONL.columns(raws, NOT_SERIES)  # type: ignore[union-attr]
        return None if got is None else cls.checked(*got)

    @classmethod
    def checked(cls, keys: list[str], kinds: list[bytes], values: list[bytes], others: list[list[Any] | None]
                ) -> _Cols | None:
        """The scanner's columns as a batch, or None where json.loads must read it (``of``)."""
        b = cls(len(kinds[0]) if kinds else 0, keys, kinds, values, others)
        if not b.n:
            return None  # a batch of empty objects: json.loads's
        present = sum(b.n - kinds.count(0) for kinds in b.kinds)
        if len(b._keys) > 64 and len(b._keys) * b.n > 8 * present:
            return None
        first = _step_key(b.first())
        if first is None or b.column(first)[0] is None:
            return None
        return b

    def first(self) -> dict[str, Any]:
        """The first line's object (its keys are the first ones seen, its strings and booleans the first ones)."""
        if self._first is None:
            self._first = {k: self._first_value(i) for i, k in enumerate(self._keys) if self.kinds[i][0]}
        return self._first

    def _first_value(self, i: int) -> Any:
        kind = self.kinds[i][0]
        if kind == 1:
            return int(memoryview(self.values[i]).cast("d")[0])
        if kind == 2:
            return memoryview(self.values[i]).cast("d")[0]
        if kind == 3:
            return None
        others = self.others[i]
        # a key of NOT_SERIES keeps no strings or booleans: the flavour and step key read only its type
        return others[0] if others is not None else _SKIPPED[kind]

    def key_order(self) -> list[str]:
        head = [k for i, k in enumerate(self._keys) if self.kinds[i][0]]  # the first line's keys come first
        return head + sorted(self._keys[len(head):])

    def column(self, key: str) -> tuple[array | None, None]:
        i = self.index[key]
        if self.kinds[i].translate(None, _NUMBER_KINDS):
            return None, None
        nums = array("d")
        nums.frombytes(self.values[i])
        return nums, None

    def objects(self, key: str, col: object) -> Sequence[Any]:
        """The values of a column of numbers (the step key's) as json.loads gave them, made at the lines read."""
        i = self.index[key]
        values = array("d")
        values.frombytes(self.values[i])
        return _Numbers(self.kinds[i], values)

    def values_of(self, key: str, col: object) -> array:
        values = array("d")
        values.frombytes(self.values[self.index[key]])
        return values

    def not_numbers(self, key: str, col: object) -> list[tuple[int, Any]]:
        i = self.index[key]
        return CJSONL.odd_rows(self.kinds[i], self.others[i], _ABSENT)  # type: ignore[union-attr]

    def only_null(self, key: str, col: object) -> bool:
        return not self.kinds[self.index[key]].translate(None, _NULL_KINDS)

    def timed(self) -> bool:
        return "_timestamp" in self.index

    def walls(self) -> Sequence[float]:
        i = self.index.get("_timestamp")
        if i is None:
            return _NANS * self.n  # an array: a run of points is one copy of its slice
        walls = array("d")
        walls.frombytes(self.values[i])  # NaN where the line holds no number
        return walls

    def last_number(self, key: str) -> float | None:
        i = self.index.get(key)
        if i is None:
            return None
        kinds = self.kinds[i]
        at = max(kinds.rfind(1), kinds.rfind(2))
        return None if at < 0 else memoryview(self.values[i]).cast("d")[at]

    def rows_without_loss(self) -> list[int]:
        loss = [self.kinds[i] for i, k in enumerate(self._keys) if k.endswith("loss")]
        return [r for r in range(self.n) if not any(kinds[r] for kinds in loss)]


class _Numbers:
    """A column of numbers as json.loads gives them (an int for an integer literal), made one at a time: the
    reader reads the step of a few lines (a null's, the last), not of every line."""

    def __init__(self, kinds: bytes, values: array) -> None:
        self.kinds, self.values = kinds, values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> float:
        v = self.values[i]
        return int(v) if self.kinds[i] == 1 else v


def _array_text(raws: list[str]) -> str:
    """The lines as the text of one JSON array: the brackets added to the first and last line before the join,
    not around its result (two more copies of the whole batch). Joined by ",\n": a JSON string holds no raw line
    break, so none goes on into the next line (joined by "," alone, '"x}' and '{y"' were one string)."""
    first, last = raws[0], raws[-1]
    raws[0] = "[" + first
    raws[-1] = raws[-1] + "]"
    try:
        return ",\n".join(raws)
    finally:
        raws[0], raws[-1] = first, last


def _flat_lines(text: str, n: int) -> bool:
    """Whether each of `_array_text`'s ``n`` lines starts with "{", ends with "}" and holds no other "{": then a
    line's object, begun at its start, ends at its end (its last "}" can close nothing else, and no string goes on
    past a line), so the array's objects are the lines'. Else a structure begun on one line may close on the next,
    a line may hold two objects, and the array can still have as many objects as lines with values on the wrong
    lines (`_each_line` decides those). Two passes of str.count: the separators are the only ",\n" (a line holds no
    line break), so "},\n{" counts the lines that end with "}" before one that starts with "{"."""
    return (text.startswith("[{") and text.endswith("}]") and text.count("},\n{") == n - 1
            and text.count("{") == n)


_NOT_BRACES = bytes(sorted(set(range(256)) - set(b"{}\n\r")))  # what `_flat_count` leaves out of the text


def _flat_count(text: str) -> int:
    """The number of lines of ``text`` when the braces of each line begin with its only "{" and end with a "}" (and
    no line has a carriage return), else 0. Read from the braces alone (the text encoded, then a bytes.translate in C
    that keeps 3 characters a line of 250: 0.065 s a 100 MB log; str.translate took as long, three passes of
    str.count longer). When then the text with each line break made a comma decodes to as many objects as lines,
    each line is one object between JSON whitespace: the n "{" are the n objects' starts (no "{" in a string or
    nested), the object begun at a line's "{" closes before the next line's, so at a "}" of its own line, and what
    lies between two objects, the comma made of the line break aside, is whitespace (anything else would be one more
    element, or invalid). A string cannot go on into the next line, nor a structure: each object's text is its own
    line's."""
    braces = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACES)
    n = braces.count(b"\n") + (not text.endswith("\n"))
    if (not braces.startswith(b"{") or not braces.endswith(b"}\n" if text.endswith("\n") else b"}")
            or b"\r" in braces or braces.count(b"}\n{") != n - 1 or braces.count(b"{") != n):
        return 0
    return n


def _each_line(raws: list[str]) -> list[Any] | None:
    """Each line decoded on its own by json's scanner (what json.loads does for a line without whitespace at its
    ends: the lines are stripped), or None when one is not exactly one JSON value (`_line_by_line` then reports it).
    A C-level map: about 1.2x the batch's json.loads."""
    try:
        got = list(map(_SCAN, raws, repeat(0)))
    except (StopIteration, ValueError):
        return None
    if list(map(_SECOND, got)) != list(map(len, raws)):
        return None
    return list(map(_FIRST, got))


def _sparse(objs: list[dict[str, Any]], union: set[str]) -> bool:
    """Keys that change from line to line: columns would cost keys x lines (296 s for 4 MB with a new
    key on each line), one object at a time costs what the lines hold."""
    keys = len(union)
    return keys > 64 and keys * len(objs) > 8 * sum(map(len, objs))


def _step_key(obj: dict[str, Any]) -> str | None:
    return next((k for k in STEP_KEYS if type(obj.get(k)) in _NUMBER_TYPES), None)


def _nonfinite(v: Any) -> float | None:
    """NaN or an infinity spelled as a string ("nan", "NaN", "-inf", "Infinity"); None for any other value."""
    return _NONFINITE.get(v.strip().lower()) if isinstance(v, str) and len(v) <= 12 else None


def _num(v: Any) -> float | None:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return as_double(v)
    return None



def _flavour(obj: dict[str, Any]) -> str:
    if "current_steps" in obj:
        return "llamafactory"
    if "_step" in obj:
        return "wandb"
    if "iteration" in obj and ("data_time" in obj or "eta_seconds" in obj or "total_loss" in obj):
        return "detectron2"
    if "step" in obj and ("data_time" in obj or "iter" in obj or "base_lr" in obj):
        return "mmengine"
    if any(k.startswith("train_") for k in obj) and any(k.startswith("test_") for k in obj):
        return "detr"
    return "generic"


def looks_like(head: str) -> bool:
    for line in head.splitlines()[:5]:
        line = line.strip()
        if not line:
            continue
        if not line.startswith("{"):
            return False
        try:
            return isinstance(json.loads(line), dict)
        except ValueError:
            # A first line longer than the head we sniffed is still JSONL if it starts like it.
            return line.startswith('{"')
    return False


def _sniff(p: Probe) -> Detection | None:
    return Detection("jsonl", "one JSON object per line") if looks_like(p.head) else None


FORMAT = FormatSpec(
    "jsonl", "JSON lines: detectron2 / mmengine metrics.json, LLaMA-Factory trainer_log.jsonl, W&B history",
    open=line_format("jsonl", JsonlReader), reader=JsonlReader, priority=40, sniff=_sniff, suffixes=(".jsonl", ".json"),
    globs=("**/*.jsonl", "**/metrics.json", "**/scalars.json"),
    activation=("**/trainer_log.jsonl", "**/wandb-history.jsonl", "**/scalars.json"),
    fuzz_seed="fixtures/runs/detectron2-maskrcnn/output/metrics.json")
