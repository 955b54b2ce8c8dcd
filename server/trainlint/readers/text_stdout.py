"""Plain-text trainer stdout, best effort by line patterns.

Recognised: nanoGPT / modded-nanogpt ``step:N/M train_loss:X``, llm.c ``s:N trl:X`` and
``step N/M | loss X | norm Y``, build-nanogpt ``N train X``, DeepSpeed ``steps: N loss: X``,
``Epoch [N/M], Train Loss: X`` prints, mmengine ``Epoch(train) [e][i/n] … loss: X``,
detectron2 ``iter: N total_loss: X`` and HF Trainer dict lines ``{'loss': X, …}``.
A value needs a step: on its own line, or carried from the last line that had one; lines before
the first step (config dumps, printed source code) are not read as measurements.
"""

from __future__ import annotations

import contextlib
import re
from functools import lru_cache

from .._record import record
from ..lines import split_lines
from ..model import NUMBER_RE, Event, EventKind, Locator, LogFile, Role, parse_number
from ..roles import Classified, RoleMap, classify
from .base import FormatReader

_NUM = r"(?:" + NUMBER_RE + r")"
# key: value / key=value pairs; keys may be a few words ("Train Loss", "Smoothed Validation Loss").
_PAIR = re.compile(
    r"(?:(?<=^)|(?<=[\s,|{(\[]))['\"]?(?P<key>[A-Za-z_][\w./-]*(?: [A-Za-z_][\w./-]*){0,3})['\"]?"
    r"\s*[:=]\s*\[?(?P<v>" + _NUM + r")(?![\w.])"
)
# llm.c: "step  750/19560 | loss 4.76 (-1.36z)| norm 0.58 (-1.13z)| lr 6.00e-04 | 4212.08 ms"
_LLMC_STEP = re.compile(r"^step\s+(?P<step>\d+)/(?P<total>\d+)\s*\|")
_LLMC_PAIR = re.compile(r"(?:^|\|)\s*(?P<key>loss|norm|lr)\s+(?P<v>" + _NUM + r")")
_LLMC_VAL = re.compile(r"^val loss (?P<v>" + _NUM + r")\s*$")
# build-nanogpt log.txt: "19072 train 3.051, 19072 val 3.08, 19072 hella 0.30"
_BUILD = re.compile(r"^(?P<step>\d+) (?P<key>train|val|hella) (?P<v>" + _NUM + r")\s*$")
_EPOCH = re.compile(r"Epoch\s*\[\s*(?P<ep>\d+)\s*/\s*(?P<tot>\d+)\s*\]")
_MMENGINE = re.compile(r"Epoch\((?P<mode>train|val)\)\s*\[(?P<ep>\d+)\]\[\s*(?P<it>\d+)/(?P<n>\d+)\]")
_HF_DICT = re.compile(r"^\s*\{'[A-Za-z_]")
_STEP_WORD = re.compile(r"(?:^|[\s\[(])(?:step|iter|iteration)\s+(?P<n>\d+)\b(?!\s*/)", re.I)
_LLMC_SHORT = re.compile(r"^s:\d+ (?:trl|tel):")
_STEP_KEYS = {"step", "steps", "s", "iter", "iteration", "global_step", "global step", "it"}
_SKIP_KEYS = _STEP_KEYS | {"epoch", "eta", "total", "rank", "skipped"}
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):")
_KILLED = re.compile(r"CANCELLED AT|DUE TO TIME LIMIT|Killed|KeyboardInterrupt|out of memory", re.I)
_ROLE_HINTS = {"trl": Role.TRAIN_LOSS, "tel": Role.EVAL_LOSS, "train": Role.TRAIN_LOSS, "val": Role.EVAL_LOSS}


@record
class _State:
    step: float | None = None
    total: int | None = None
    hf_train_index: int = 0


@lru_cache(maxsize=1024)
def pair_locator(key: str) -> Locator:
    return Locator.compile(r"['\"]?" + re.escape(key) + r"['\"]?\s*[:=]\s*\[?(?P<v>" + _NUM + r")")


@lru_cache(maxsize=1024)
def word_locator(key: str) -> Locator:
    return Locator.compile(r"(?:^|\|)\s*" + re.escape(key) + r"\s+(?P<v>" + _NUM + r")")


class TextStdoutReader(FormatReader):
    format = "text"

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()

    def scan(self, text: str, first_line: int) -> None:
        st: _State = self.state
        for offset, line in enumerate(split_lines(text)):
            if line:
                self._line(line, first_line + offset, st)

    def _line(self, line: str, n: int, st: _State) -> None:
        log = self.log
        if _TRACEBACK.match(line):
            log.events.append(Event(EventKind.TRACEBACK, st.step, n, line.strip()))
            return
        if _KILLED.search(line) and st.step is not None:
            log.events.append(Event(EventKind.INTERRUPTED, st.step, n, line.strip()[:200]))
        m = _BUILD.match(line)
        if m:
            st.step = float(m.group("step"))
            key = m.group("key")
            role = _ROLE_HINTS.get(key)
            self._point(key, m.group("v"), n, st.step, word_locator(key), role)
            return
        m = _LLMC_STEP.match(line)
        if m:
            st.step, st.total = float(m.group("step")), int(m.group("total"))
            log.facts["max_steps"] = st.total
            for pm in _LLMC_PAIR.finditer(line):
                self._point(pm.group("key"), pm.group("v"), n, st.step, word_locator(pm.group("key")))
            return
        m = _LLMC_VAL.match(line)
        if m:
            if st.step is not None:
                self._point("val loss", m.group("v"), n, st.step, Locator.compile(r"^val loss (?P<v>\S+)"),
                            Role.EVAL_LOSS)
            return
        if _HF_DICT.match(line):
            self._hf_dict(line, n, st)
            return
        pairs = list(_PAIR.finditer(line))
        if not pairs:
            return
        step = None
        mm = _MMENGINE.search(line)
        if mm:
            step = float(mm.group("it"))  # within the epoch; made global below
            n_iter = int(mm.group("n"))
            step = (int(mm.group("ep")) - 1) * n_iter + step
        em = _EPOCH.search(line)
        for p in pairs:
            key = p.group("key").strip()
            if key.lower() in _STEP_KEYS:
                with contextlib.suppress(ValueError):
                    step = float(parse_number(p.group("v")))
                tail = line[p.end():p.end() + 12]
                tm = re.match(r"/(\d+)", tail)
                if tm:
                    st.total = int(tm.group(1))
                    log.facts["max_steps"] = st.total
                break
        basis = "step"
        if step is None:
            sw = _STEP_WORD.search(line)
            if sw:
                step = float(sw.group("n"))
        if step is None and em is not None:
            step = float(em.group("ep"))
            basis = "epoch"
            log.facts["planned_epochs"] = int(em.group("tot"))
        if step is None:
            step = st.step
        if step is None:
            return
        st.step = step
        for p in pairs:
            key = p.group("key").strip()
            if key.lower() in _SKIP_KEYS:
                continue
            self._point(key, p.group("v"), n, step, pair_locator(key), _ROLE_HINTS.get(key), basis)

    def _hf_dict(self, line: str, n: int, st: _State) -> None:
        """HF Trainer prints a dict per log call without the step: number them in order."""
        pairs = list(_PAIR.finditer(line))
        keys = {p.group("key") for p in pairs}
        if "train_runtime" in keys:
            self.log.events.append(Event(EventKind.END_OF_RUN, float(st.hf_train_index), n, "end-of-run summary"))
            return
        is_eval = any(k.startswith("eval_") for k in keys)
        if not is_eval:
            st.hf_train_index += 1
        step = float(st.hf_train_index)
        st.step = step
        for p in pairs:
            key = p.group("key")
            if key == "epoch":
                continue
            self._point(key, p.group("v"), n, step, pair_locator(key), None, "index")

    def _point(self, key: str, raw: str, line: int, step: float, locator: Locator,
               role: Role | None = None, basis: str = "step") -> None:
        try:
            value = parse_number(raw)
        except ValueError:
            return
        default = classify(key)
        if role is not None:
            default = Classified(role, default.aggregation, False)
        s = self.series(key, default, locator=locator, step_basis=basis)
        s.append(step, value, line)
        self.log.facts["last_step"] = step


def looks_like(head: str) -> bool:
    """Some line carries a step and a loss-like value."""
    lines = head.splitlines()
    for line in lines[:20000]:
        if _BUILD.match(line) or _LLMC_STEP.match(line) or _HF_DICT.match(line) or _LLMC_SHORT.match(line):
            return True
        if "loss" in line.lower() and (_PAIR.search(line) or _EPOCH.search(line)):
            low = line.lower()
            if any(k in low for k in ("step", "iter", "epoch", "s:")):
                return True
    return False
