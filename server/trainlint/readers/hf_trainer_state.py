"""HF Trainer ``trainer_state.json`` (also the snapshots in ``checkpoint-*/``).

Train and eval entries of ``log_history`` are told apart by their keys; the end-of-run summary
entry (``train_runtime``) is kept apart as an event, so its ``train_loss`` average is never read
as a last point. A file cut mid-write still yields every complete entry before the cut.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..core.lines import MAX_MATCH_LINE, count_breaks
from ..core.model import Aggregation, Event, EventKind, Locator, Role, _same_number
from ..core.roles import Classified, classify
from ..core.values import as_double
from .base import FormatReader, line_format
from .registry import Detection, FormatSpec, Probe

FACT_KEYS = (
    "max_steps", "global_step", "num_train_epochs", "epoch", "logging_steps", "eval_steps", "save_steps",
    "best_metric", "best_model_checkpoint", "best_global_step", "train_batch_size",
)

if TYPE_CHECKING:
    from typing import Any
_EVAL_NAMED_LOSS = re.compile(r"^eval_(?:.+_)?loss$")
_FACT_RE = re.compile(r'"(' + "|".join(FACT_KEYS) + r')"\s*:\s*("(?:[^"\\]|\\.)*"|[-\w.+]+)')
_DECODER = json.JSONDecoder()
_WS = " \t\r\n,"
_SKIP_KEYS = {"step", "epoch"}


_JSON_VALUE = re.compile(r'\s*:\s*(?P<v>-?Infinity|NaN|[-+]?[\d.eE+-]+)')


@dataclass(frozen=True, slots=True)
class JsonKeyLocator(Locator):
    """The value of one JSON key on a line: the key's quoted text found with str.find, its value matched by one
    shared pattern. A regex per key cost a compilation per series located (20,000 keys: most of the 43 s of
    ``trainlint series --format json``)."""

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(re.escape(self.source) + _JSON_VALUE.pattern)

    def span(self, line: str, value: float | None = None) -> tuple[int, int] | None:
        line = line[:MAX_MATCH_LINE]
        at = line.find(self.source)
        while at >= 0:
            m = _JSON_VALUE.match(line, at + len(self.source))
            if m is not None and (value is None or _same_number(m.group("v"), value)):
                return m.span("v")
            at = line.find(self.source, at + 1)
        return None


@lru_cache(maxsize=4096)
def json_key_locator(key: str) -> Locator:
    return JsonKeyLocator('"' + json.dumps(key)[1:-1] + '"')


class HFTrainerStateReader(FormatReader):
    format = "hf-trainer-state"
    whole_document = True

    def scan(self, text: str, first_line: int) -> None:
        log = self.log
        self._reported: set[str] = set()
        try:
            doc = json.loads(text)
        except ValueError as e:
            doc = None
            log.problem(f"the JSON document is incomplete or invalid ({_json_error(e)}); "
                        "the complete log_history entries before that point were read",
                        getattr(e, "lineno", None))
        if doc is not None and not isinstance(doc, dict):
            log.problem("the file is JSON but not an object; it is not HF Trainer output")
            return
        if doc is not None:
            for k in FACT_KEYS:
                if k in doc and doc[k] is not None:
                    log.facts[k] = doc[k]
        else:
            for m in _FACT_RE.finditer(text):
                with contextlib.suppress(ValueError):
                    log.facts.setdefault(m.group(1), json.loads(m.group(2)))
        start = text.find('"log_history"')
        if start < 0:
            log.problem("no `log_history` in this JSON: it is not HF Trainer output")
            return
        kind = _not_a_list(doc.get("log_history") if doc is not None else None, text, start)
        if kind is not None:
            log.problem(f"`log_history` is {kind}, not a list of log entries; nothing was read from it",
                        first_line + count_breaks(text, 0, start))
            return
        pos = text.find("[", start)
        if pos < 0:
            return
        pos += 1
        line = first_line + count_breaks(text, 0, pos)
        index = 0
        n = len(text)
        while True:
            start = pos
            while pos < n and text[pos] in _WS:
                pos += 1
            line += count_breaks(text, start, pos)
            if pos >= n or text[pos] == "]":
                break
            try:
                entry, end = _DECODER.raw_decode(text, pos)
            except ValueError as e:
                if doc is not None:  # cannot happen for a valid document; be safe
                    log.problem(f"log_history entry {index} could not be read: {_json_error(e)}", line)
                break
            if isinstance(entry, dict):
                self._entry(entry, text, pos, line, index)
            else:
                log.problem(f"log_history entry {index} is not an object; skipped", line)
            line += count_breaks(text, pos, end)
            pos = end
            index += 1
        log.facts["log_history_entries"] = index

    def _entry(self, entry: dict[str, Any], text: str, pos: int, line: int, index: int) -> None:
        log = self.log
        step_raw = entry.get("step")
        step = as_double(step_raw) if _is_number(step_raw) else float(index)
        if "train_runtime" in entry:
            log.events.append(_event(EventKind.END_OF_RUN, step, line, "end-of-run summary", entry))
            log.facts["summary"] = {k: v for k, v in entry.items() if _is_number(v)}
            return
        is_eval = any(k.startswith("eval_") for k in entry)
        if is_eval:
            log.events.append(_event(EventKind.EVALUATION, step, line, "evaluation", entry))
        epoch = entry.get("epoch")
        for key, value in entry.items():
            if key in _SKIP_KEYS or value is None:
                continue
            at = text.find(f'"{key}"', pos)
            key_line = line + count_breaks(text, pos, at) if at >= 0 else line
            if not _is_number(value):
                # elapsed_time and friends are strings by design; a string loss is worth a word.
                if isinstance(value, str | bool) and key not in self._reported and classify(key).role != Role.OTHER:
                    self._reported.add(key)
                    log.problem(f"`{key}` is {type(value).__name__} {value!r}, not a number; such values are "
                                "ignored", key_line)
                continue
            default = None
            if _EVAL_NAMED_LOSS.match(key):
                default = Classified(Role.EVAL_LOSS, Aggregation.EVAL, False)
            elif key == "loss":
                # A train entry's loss is the mean over the logging window: one value per log step.
                default = Classified(Role.TRAIN_LOSS, Aggregation.STEP)
            s = self.series(key, default, locator=json_key_locator(key))
            s.append(step, as_double(value), key_line)
        if _is_number(epoch):
            log.facts["last_epoch"] = as_double(epoch)
        log.facts["last_step"] = step


def _event(kind: EventKind, step: float, line: int, text: str, entry: dict[str, Any]) -> Event:
    detail = {k: v for k, v in entry.items() if _is_number(v)}
    return Event(kind, step, line, text, detail=detail)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _json_error(e: ValueError) -> str:
    msg = getattr(e, "msg", str(e))
    lineno, colno = getattr(e, "lineno", None), getattr(e, "colno", None)
    if lineno is not None:
        return f"{msg} at line {lineno}, column {colno}"
    return msg


_AFTER_KEY = re.compile(r'"log_history"\s*:\s*(.)')
_KINDS = {dict: "an object", str: "a string", int: "a number", float: "a number", bool: "a boolean",
          type(None): "null"}


def _not_a_list(value: Any, text: str, start: int) -> str | None:
    """What ``log_history`` is when it is not a list ("an object", "a string"), else None. From the parsed
    document when there is one, else from the character after its colon (a document cut mid-write)."""
    if value is not None:
        return None if isinstance(value, list) else _KINDS.get(type(value), type(value).__name__)
    m = _AFTER_KEY.match(text, start)
    if m is None or m.group(1) == "[":
        return None
    return {"{": "an object", '"': "a string", "n": "null", "t": "a boolean", "f": "a boolean"}.get(m.group(1),
                                                                                              "a number")


def looks_like(head: str) -> bool:
    return '"log_history"' in head


def _sniff(p: Probe) -> Detection | None:
    if looks_like(p.head):
        return Detection("hf-trainer-state", "JSON with log_history")
    if p.name == "trainer_state.json":
        return Detection(None, "named trainer_state.json but has no log_history: not HF Trainer output")
    return None


FORMAT = FormatSpec(
    "hf-trainer-state", "HF Trainer trainer_state.json (its log_history)",
    open=line_format("hf-trainer-state", HFTrainerStateReader), reader=HFTrainerStateReader,
    priority=20, sniff=_sniff, suffixes=(".json",),
    globs=("**/trainer_state.json",), activation=("**/trainer_state.json",),
    fuzz_seed="fixtures/runs/gallery-fp16_nan/trainer_state.json")
