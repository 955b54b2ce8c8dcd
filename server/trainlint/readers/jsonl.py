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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.lines import split_lines
from ..core.model import Aggregation, Event, EventKind, LogFile, Role
from ..core.roles import Classified, RoleMap, classify
from .base import FormatReader, line_format
from .hf_trainer_state import json_key_locator
from .registry import Detection, FormatSpec, Probe

if TYPE_CHECKING:
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
NULL_RUN = 3  # nulls in a row, after numbers, that are read as NaN
_ABSENT = object()
_NONFINITE = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
              "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}


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

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()

    def scan(self, text: str, first_line: int) -> None:
        """Decode the whole chunk in one call when every line is an object; else line by line."""
        stripped = [raw.strip() for raw in split_lines(text)]
        numbers = [first_line + i for i, raw in enumerate(stripped) if raw]
        raws = [raw for raw in stripped if raw] if len(numbers) != len(stripped) else stripped
        for k in range(0, len(raws), BATCH):  # batches bound the memory the decoded objects take
            self._batch(raws[k:k + BATCH], numbers[k:k + BATCH])

    def _batch(self, raws: list[str], numbers: list[int]) -> None:
        try:
            objs = json.loads("[" + ",".join(raws) + "]")
        except ValueError:
            objs = None
        if objs is not None and len(objs) == len(raws) and all(type(o) is dict for o in objs):
            st: _State = self.state
            if st.flavour is None:
                st.flavour = _flavour(objs[0])
                self.log.facts["flavour"] = st.flavour
            if _sparse(objs):
                for obj, line in zip(objs, numbers, strict=True):
                    self._record(obj, line, st)
            else:
                self._columns(objs, numbers, st)
        else:
            self._line_by_line(raws, numbers)

    def _columns(self, objs: list[dict[str, Any]], lines: list[int], st: _State) -> None:
        """The same as ``_record`` per object, a column at a time (C-level comprehensions)."""
        log = self.log
        first = _step_key(objs[0])
        step_col = [o.get(first) for o in objs] if first else None
        uniform = step_col is not None and {type(v) for v in step_col} <= _NUMBER_TYPES
        if uniform:
            step_keys = [first] * len(objs)
            steps = step_col
        else:
            step_keys = [_step_key(o) for o in objs]
            pairs = enumerate(zip(objs, step_keys, strict=True))
            steps = [float(o[k]) if k else float(st.index + i) for i, (o, k) in pairs]
        st.index += len(objs)
        walls = [float(w) if type(w) in (int, float) else math.nan for w in (o.get("_timestamp") for o in objs)]
        for o in reversed(objs):
            total = _num(o.get("total_steps"))
            if total is not None:
                log.facts["max_steps"] = total
                break
        if st.flavour == "detectron2":
            for i, o in enumerate(objs):
                if not any(k.endswith("loss") for k in o):
                    log.events.append(Event(EventKind.EVALUATION, steps[i], lines[i], "evaluation"))
        keys = dict.fromkeys(objs[0])
        for k in sorted(set().union(*objs) - keys.keys()):
            keys[k] = None
        for key in keys:
            if key in NOT_SERIES or (uniform and key == first):
                continue
            col = [o.get(key, _ABSENT) for o in objs]
            all_numbers = {type(v) for v in col} <= _NUMBER_TYPES
            if all_numbers and uniform:
                s = self._series_of(key, "step")
                s.extend(steps, col, lines, walls)  # array("d") takes ints and floats alike
                self._numbered(key)
                continue
            out: tuple[list[float], list[float], list[int], list[float]] = ([], [], [], [])
            basis = None
            for i, v in enumerate(col):
                if v is _ABSENT or (not uniform and step_keys[i] == key):
                    continue  # a key that is another object's step key is not a value there
                k = step_keys[i]
                here = "epoch" if k == "epoch" else ("index" if k is None else "step")
                if v is None:
                    for point in self._null(key, steps[i], lines[i], walls[i]):
                        basis = basis or here
                        for acc, x in zip(out, point, strict=True):
                            acc.append(x)  # type: ignore[attr-defined]
                    continue
                f = float(v) if type(v) in _NUMBER_TYPES else _nonfinite(v)
                if f is None:
                    self._not_a_number(key, v, lines[i])
                    continue
                self._numbered(key)
                basis = basis or here
                for acc, x in zip(out, (steps[i], f, lines[i], walls[i]), strict=True):
                    acc.append(x)  # type: ignore[attr-defined]
            if out[0]:
                self._series_of(key, basis or "step").extend(*out)
        log.facts["last_step"] = steps[-1]

    def _line_by_line(self, raws: list[str], numbers: list[int]) -> None:
        st: _State = self.state
        loads = json.loads
        for line, raw in zip(numbers, raws, strict=True):
            try:
                obj = loads(raw)
            except ValueError as e:
                self._bad(line, f"line {line} is not valid JSON ({getattr(e, 'msg', e)}); skipped")
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
        step = float(obj[step_key]) if step_key else float(st.index)
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


def _sparse(objs: list[dict[str, Any]]) -> bool:
    """Keys that change from line to line: columns would cost keys x lines (296 s for 4 MB with a new
    key on each line), one object at a time costs what the lines hold."""
    keys = len(set().union(*objs))
    return keys > 64 and keys * len(objs) > 8 * sum(map(len, objs))


def _step_key(obj: dict[str, Any]) -> str | None:
    return next((k for k in STEP_KEYS if type(obj.get(k)) in _NUMBER_TYPES), None)


def _nonfinite(v: Any) -> float | None:
    """NaN or an infinity spelled as a string ("nan", "NaN", "-inf", "Infinity"); None for any other value."""
    return _NONFINITE.get(v.strip().lower()) if isinstance(v, str) and len(v) <= 12 else None


def _num(v: Any) -> float | None:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
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
