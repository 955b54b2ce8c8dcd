"""JSON-lines logs: detectron2 ``metrics.json``, mmengine ``scalars.json``, LLaMA-Factory
``trainer_log.jsonl``, W&B ``wandb-history.jsonl``, DETR ``log.txt`` and generic files.

Each line is one object; every numeric top-level key is a series. ``null`` is an absent value;
strings and booleans where a number belongs are reported once per key, never judged.
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


@dataclass
class _State:
    flavour: str | None = None
    index: int = 0
    bad_keys: set[str] = field(default_factory=set)
    bad_lines: int = 0


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
            col = [o.get(key) for o in objs]
            all_numbers = {type(v) for v in col} <= _NUMBER_TYPES
            idx = range(len(col)) if all_numbers else [i for i, v in enumerate(col) if type(v) in _NUMBER_TYPES]
            if not all_numbers:
                for i, v in enumerate(col):
                    if isinstance(v, str | bool) and key not in st.bad_keys and classify(key).role != Role.OTHER:
                        st.bad_keys.add(key)
                        log.problem(f"`{key}` is {type(v).__name__} {v!r}, not a number; such values are ignored",
                                    lines[i])
                        break
            if not uniform:  # a key that is another object's step key is not a value there
                idx = [i for i in idx if step_keys[i] != key]
            if not idx:
                continue
            k0 = step_keys[idx[0]]
            basis = "epoch" if k0 == "epoch" else ("index" if k0 is None else "step")
            default = TIMING.get(key) if st.flavour in ("detectron2", "mmengine") else None
            s = self.series(key, default, locator=json_key_locator(key), step_basis=basis)
            if all_numbers and uniform:
                s.extend(steps, col, lines, walls)  # array("d") takes ints and floats alike
            else:
                s.extend([steps[i] for i in idx], [float(col[i]) for i in idx], [lines[i] for i in idx],
                         [walls[i] for i in idx])
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
            v = _num(value)
            if v is None:
                if isinstance(value, str | bool) and key not in st.bad_keys and classify(key).role != Role.OTHER:
                    st.bad_keys.add(key)
                    log.problem(f"`{key}` is {type(value).__name__} {value!r}, not a number; such values are ignored",
                                line)
                continue
            default = TIMING.get(key) if st.flavour in ("detectron2", "mmengine") else None
            s = self.series(key, default, locator=json_key_locator(key), step_basis=basis)
            s.append(step, v, line, wall)
        log.facts["last_step"] = step


_NUMBER_TYPES = {int, float}


def _sparse(objs: list[dict[str, Any]]) -> bool:
    """Keys that change from line to line: columns would cost keys x lines (296 s for 4 MB with a new
    key on each line), one object at a time costs what the lines hold."""
    keys = len(set().union(*objs))
    return keys > 64 and keys * len(objs) > 8 * sum(map(len, objs))


def _step_key(obj: dict[str, Any]) -> str | None:
    return next((k for k in STEP_KEYS if type(obj.get(k)) in _NUMBER_TYPES), None)


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
    open=line_format("jsonl", JsonlReader), priority=40, sniff=_sniff, suffixes=(".jsonl", ".json"),
    globs=("**/*.jsonl", "**/metrics.json", "**/scalars.json"),
    activation=("**/trainer_log.jsonl", "**/wandb-history.jsonl", "**/scalars.json"),
    fuzz_seed="fixtures/runs/detectron2-maskrcnn/output/metrics.json")
