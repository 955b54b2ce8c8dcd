"""Coqui ``trainer`` logs (``trainer_0_log.txt``, and Coqui blocks inside notebook stdout).

A TRAINING step block (``--> TIME: … -- STEP: a/b -- GLOBAL_STEP: g``) is followed by
``| > key: value  (running average)`` lines: each key gives two series, the value at the step and
Coqui's running average over the epoch. In an EVAL block the parenthesised number is the change
since the previous evaluation, not an average, and is not read as a value. An evaluation is
placed at the global step where the epoch before it ended (``g + b - a`` of the last step line),
which is the step TensorBoard records for it and the step in ``best_model_<step>.pth``.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass
from functools import lru_cache

from ..core.accel import CTEXT
from ..core.lines import count_breaks
from ..core.model import Aggregation, Event, EventKind, Locator, LogFile, Role, Series, parse_number
from ..core.roles import Classified, RoleMap, classify
from .base import FormatReader, line_format
from .registry import Detection, FormatSpec, Probe

_ESC = r"(?:\x1b\[[\d;]*m)*"
# A value line after its key: the number, the parenthesised one, the end of the line. One text for the regex that
# reads a line and for the block patterns that read many at once (_block_pattern), so both read a line alike.
_VALUE = (":" + _ESC + r"[ \t]*+({num}[^\s\x1b(]++)[ \t]*+" + _ESC
          + r"(?:[ \t]*+\(({paren}[^)\n]*+)\))?[ \t\r]*+$")
# The leading look-ahead lets the engine skip, in C, every position that cannot start a match. Runs are
# possessive (``*+``): adjacent blank runs would otherwise try every split of a long blank stretch.
_MASTER = re.compile(
    r"(?=[-|>!T])"
    r"(?:(?P<stephdr>--> (?:TIME: (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) -- )?"
    r"STEP: (?P<local>\d{1,15})/(?P<total>\d{1,15})"
    r" -- GLOBAL_STEP: (?P<gstep>\d{1,15}))"
    r"|(?P<val>\| > (?P<key>[A-Za-z_][\w.]*+)" + _VALUE.format(num="?P<num>", paren="?P<paren>") + ")"
    r"|(?P<epoch>> EPOCH: (?P<ep>\d{1,15})/(?P<eptot>\d{1,15}))"
    r"|(?P<evalhdr>> EVALUATION\b)"
    r"|(?P<evalperf>--> EVAL PERFORMANCE)"
    r"|(?P<training>> TRAINING \()"
    r"|(?P<best>> BEST MODEL : (?P<bestpath>[^\n\r\x1b]*))"
    r"|(?P<ckpt>> CHECKPOINT : (?P<ckptpath>[^\n\r\x1b]*))"
    r"|(?P<kbd>> Keyboard interrupt detected)"
    r"|(?P<restored>> Model restored from step (?P<rstep>\d{1,15}))"
    r"|(?P<tb>^Traceback \(most recent call last\):)"
    r"|(?P<kept>! Run is kept in))",
    re.MULTILINE,
)
_STEP_IN_NAME = re.compile(r"_(\d+)\.pth")
# the events the compiled scanner makes itself (coqui_sink's order)
_SCANNED = (EventKind.EPOCH, EventKind.EVALUATION, EventKind.BEST_MODEL, EventKind.CHECKPOINT)
_MODES = ("", "train", "eval-pending", "eval")  # _State.mode as the compiled scanner numbers it
# A value line as the pure block path reads it: blanks before it, nothing else (a character that can start a match
# of _MASTER before its ``| > `` would be read first), and its line break.
_LINE = re.compile(r"[ \t]*+\| > (?P<key>[A-Za-z_][\w.]*+)" + _VALUE.format(num="?P<num>", paren="?P<paren>") + r"\n",
                   re.MULTILINE)
_NUM = r"([0-9A-Za-z_.+\-]++)"  # a number's characters as Coqui writes them (inf, nan, 1e-05, -0.5)
# An evaluation's two header lines as Coqui writes them after a training block, each after its blank lines and
# whole: nothing before the ``>`` or the ``-->`` can start a match of _MASTER, _MASTER reads them as the evaluation
# and its performance (the step alternative fails at ``EVAL``), and nothing after either can start another.
_EVAL = re.compile(r"(?P<blank>\n*+)(?:\x1b\[1m)?[ \t]*+> EVALUATION[ \t]*+(?:\x1b\[0m)?[ \t]*+\n"
                   r"(?P<blank2>\n*+)[ \t]*+(?:\x1b\[1m)?--> EVAL PERFORMANCE(?:\x1b\[0m)?[ \t]*+\n")
_READING = ("train", "eval")  # the modes a value line is read in
_OPENER = re.compile(r"[-|>!]")  # every match of _MASTER not at a line's start begins with one of these
# A compiled block pattern holds about 1.1 KB a line (24 KB for VITS's 21 training keys): a reader keeps at most
# _MAX_LAYOUTS of at most _MAX_BLOCK lines (2.6 MB for a log whose every block differs; real logs have 2 or 3),
# and the lines past them are read a line at a time.
_MAX_BLOCK = 64     # value lines one block pattern reads
_MAX_LAYOUTS = 32   # block patterns a reader makes


_Shape = tuple[str, bool, tuple[str, ...] | None]  # a value line: its key, whether it has an average, its text


class _Layout:
    """The value lines of a block: their keys in order, which of them have a parenthesised number, and the pattern
    that reads them all with one match. A line of the pattern is _LINE with its key written out, so it reads what
    _MASTER's value alternative reads there: for training, the average either required or refused (the optional
    group _MASTER tries first reads it when it is there), each a group; for an evaluation, only the number is one.
    The number is the ASCII characters of numbers (_NUM), a class the engine checks in a bitmap: a number with any
    other character that _MASTER's number takes is refused (what may follow a number is none of those), and
    where the pattern matches, its run is _MASTER's. A line has one way to match (possessive runs, a number cannot
    start with the escape a shorter colour code would leave), so a later line that fails sends the engine back
    through no other reading of the earlier ones. ``at``: where each key's number is in the groups (``width``).

    A line without a colour code is matched by its own text around its numbers (``pieces``: the line up to its
    number, from there to its average, from there to its end; the engine compares them a character at a time, half
    the time of the classes): what _MASTER's blanks and colour codes took of it depends on those characters and on
    the first one of the number, which is never a blank or an escape, so another line with the same pieces is read
    the same way, and a line that differs is learnt as another layout."""

    __slots__ = ("at", "keys", "parens", "pattern", "width")

    def __init__(self, train: bool, lines: tuple[_Shape, ...]) -> None:
        self.keys = tuple(key for key, _, _ in lines)
        self.parens = tuple(paren for _, paren, _ in lines) if train else (False,) * len(lines)
        at, width, parts = [], 0, []
        number = ":" + _ESC + r"[ \t]*+" + _NUM + r"[ \t]*+" + _ESC
        average = r"([^)\n]*+)" if train else r"[^)\n]*+"
        for key, paren, pieces in lines:
            at.append(width)
            width += 1 + (train and paren)
            if pieces is not None:
                parts.append(re.escape(pieces[0]) + _NUM + re.escape(pieces[1])
                             + (average + re.escape(pieces[2]) if paren else ""))
                continue
            if not train:
                tail = number + r"(?:[ \t]*+\([^)\n]*+\))?[ \t\r]*+$"
            elif paren:
                tail = number + r"[ \t]*+\(([^)\n]*+)\)[ \t\r]*+$"
            else:
                tail = number + r"[ \t\r]*+$"
            parts.append(r"[ \t]*+\| > " + re.escape(key) + tail + r"\n")
        self.at, self.width = tuple(at), width
        self.pattern = re.compile("".join(parts), re.MULTILINE)


class _Batch:
    """A chunk's blocks of one layout that the block path read: their numbers as float() read them, a block's
    after the other's (``values``), and each block's step, wall time and first line."""

    __slots__ = ("layout", "lines", "steps", "values", "walls")

    def __init__(self) -> None:
        self.layout: _Layout | None = None
        self.values = array("d")
        self.steps: list[float] = []
        self.walls: list[float] = []
        self.lines: list[int] = []


class _Chunk:
    """What the block path keeps while it reads one chunk: the training points per key (step, value, line, wall;
    step, average, line), the pending training and evaluation blocks, whether a training point had a wall time."""

    __slots__ = ("buffers", "evals", "timed", "train")

    def __init__(self) -> None:
        self.buffers: dict[str, tuple[array, ...]] = {}
        self.train, self.evals, self.timed = _Batch(), _Batch(), False

    def buffer(self, key: str) -> tuple[array, ...]:
        buf = self.buffers.get(key)
        if buf is None:
            buf = self.buffers[key] = tuple(array(t) for t in "ddIdddI")
        return buf


@dataclass
class _State:
    mode: str = ""                # "", "train", "eval-pending", "eval"
    step: float | None = None
    local: int = 0
    total: int = 0
    wall: float = math.nan
    eval_step: float | None = None
    epoch: int | None = None


@lru_cache(maxsize=1024)
def current_locator(key: str) -> Locator:
    return Locator.compile(r"\| > " + re.escape(key) + ":" + _ESC + r"[ \t]*(?P<v>[^\s\x1b(]+)")


@lru_cache(maxsize=1024)
def running_locator(key: str) -> Locator:
    return Locator.compile(r"\| > " + re.escape(key) + r":[^(\n]*\((?P<v>[^)\n]*)\)")


class CoquiReader(FormatReader):
    format = "coqui"

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()
        self._layouts: dict[tuple[bool, tuple[_Shape, ...]], _Layout] = {}  # the ones this reader met
        self._recent: dict[str, _Layout] = {}  # per mode: the last layout read
        self.forget_series()

    def scan(self, text: str, first_line: int) -> None:
        if CTEXT is not None:
            self._scan_compiled(text, first_line)
        elif "\r" in text:  # a carriage return counts as a line break here and not in the block patterns
            self._scan_lines(text, first_line)
        else:
            self._scan_blocks(text, first_line)

    def _scan_lines(self, text: str, first_line: int) -> None:
        """The pure-Python read a line at a time, one regex match each: for a chunk with a carriage return, which
        _scan_blocks leaves (it counts line breaks and matches blocks by ``\n`` alone)."""
        st: _State = self.state
        line = first_line
        last = 0
        ch = _Chunk()  # a chunk's points, added to their series at its end
        for m in _MASTER.finditer(text):
            start = m.start()
            line += count_breaks(text, last, start)  # the chunk holds a "\r": scan sends it here for that
            last = start
            kind = m.lastgroup
            if kind == "val":
                if st.mode == "train" and st.step is not None:
                    self._slow_train(m, line, st, ch)
                elif st.mode == "eval" and st.eval_step is not None:
                    self._eval_value(m, line, st)
            else:  # a structure line (step header, epoch, evaluation, checkpoint…)
                self._structure(kind, m, line, st)
        self._end_chunk(ch)

    def _scan_blocks(self, text: str, first_line: int) -> None:
        """scan in pure Python a block at a time (a chunk without a carriage return): after a line that leaves the
        reader training or evaluating, the value lines under it are read by one match of their keys' pattern and
        their numbers converted a key's column at a time (a call a value line was 9 of 10 of the time); the regex
        reads every other line as _scan_lines does, a value line the blocks left after their points."""
        st: _State = self.state
        ch = _Chunk()
        line, last, pos = first_line, 0, 0
        count, search, find, opener = text.count, _MASTER.search, text.find, _OPENER.search
        k, end = self._blocks(text, 0, line, st, ch)
        if k:
            line, last, pos = line + k, end, end
        while (m := search(text, pos)) is not None:
            start = m.start()
            line += count("\n", last, start)
            last, pos = start, m.end()
            kind = m.lastgroup
            if kind == "val":
                if st.mode == "train" and st.step is not None:
                    self._flush_train(ch)  # the blocks' points first: each series gets its points in order
                    self._slow_train(m, line, st, ch)
                elif st.mode == "eval" and st.eval_step is not None:
                    self._flush_eval(ch)
                    self._eval_value(m, line, st)
                continue
            self._structure(kind, m, line, st)
            if st.mode in _READING and (nl := find("\n", pos)) >= 0 and opener(text, pos, nl) is None:
                k, end = self._blocks(text, nl + 1, line + 1, st, ch)  # nothing else on the line: the block under it
                if k:
                    line, last, pos = line + 1 + k, end, end
        self._end_chunk(ch)

    def _end_chunk(self, ch: _Chunk) -> None:
        """The chunk's pending blocks flushed, and every training point it buffered added to its series."""
        self._flush_train(ch)
        self._flush_eval(ch)
        pairs, timed = self._pairs, None if ch.timed else False
        for key, buf in ch.buffers.items():
            current, running = pairs[key]
            current.extend(buf[0], buf[1], buf[2], buf[3], timed=timed)
            running.extend(buf[4], buf[5], buf[6], [])  # the step's wall-clock time is on its current value

    def _blocks(self, text: str, p: int, line: int, st: _State, ch: _Chunk) -> tuple[int, int]:
        """_block, and after a training block the evaluation Coqui writes next: its two header lines read as
        _structure reads them (two regex searches and calls less an epoch), its values as _block reads them."""
        k, end = self._block(text, p, line, st, ch)
        if k and st.mode == "train" and (h := _EVAL.match(text, end)) is not None:
            at = line + k + len(h.group("blank"))  # the evaluation's line
            st.mode = "eval-pending"
            self._evaluation(at)
            st.mode = "eval"
            at += 2 + len(h.group("blank2"))  # the line under its performance line
            k, end = self._block(text, h.end(), at, st, ch)
            return at + k - line, end
        return k, end

    def _block(self, text: str, p: int, line: int, st: _State, ch: _Chunk) -> tuple[int, int]:
        """The value lines from ``p`` (line ``line``) read with one match when the reader is training or evaluating
        there: (lines read, where they end); (0, p) when it is not, no value line is there, or float() refuses one
        of their numbers (the regex then reads them a line at a time, as _scan_lines does)."""
        train = st.mode == "train"
        if train and st.step is not None:
            batch, step = ch.train, st.step
        elif st.mode == "eval" and st.eval_step is not None:
            batch, step = ch.evals, st.eval_step
        else:
            return 0, p
        layout = self._recent.get(st.mode)
        m = layout.pattern.match(text, p) if layout is not None else None
        if m is None or _LINE.match(text, m.end()) is not None:  # other keys, or more of them
            layout = self._learn(text, p, train)
            if layout is None or (m := layout.pattern.match(text, p)) is None:
                return 0, p
            self._recent[st.mode] = layout
        if layout is not batch.layout:
            if train:
                self._flush_train(ch)
            else:
                self._flush_eval(ch)
            batch.layout = layout
        values = batch.values
        n = len(values)
        try:
            values.extend(map(float, m.groups()))  # converted while the text is in the cache
        except ValueError:
            del values[n:]
            return 0, p
        if layout not in (self._ready if train else self._ready_eval):
            self._block_series(layout, train)
        if train:
            batch.walls.append(st.wall)
        batch.steps.append(step)
        batch.lines.append(line)
        return len(layout.keys), m.end()

    def _learn(self, text: str, p: int, train: bool) -> _Layout | None:
        """The layout of the value lines from ``p``: their keys up to the first repeated one (a key's points must
        come in order) and their pattern; None when there is no value line or too many layouts were made."""
        lines: list[_Shape] = []
        seen: set[str] = set()
        while len(lines) < _MAX_BLOCK and (m := _LINE.match(text, p)) is not None:
            key = m.group("key")
            if key in seen:
                break
            seen.add(key)
            lines.append(_shape(m))
            p = m.end()
        if not lines:
            return None
        t = (train, tuple(lines))
        layout = self._layouts.get(t)
        if layout is None:
            if len(self._layouts) >= _MAX_LAYOUTS:
                return None
            layout = self._layouts[t] = _layout(*t)
        return layout

    def _block_series(self, layout: _Layout, train: bool) -> None:
        """A block's series made in the order of its lines, as _scan_lines makes them at their first number (the
        block path reads a block whose every number float() reads): once made, the layout is not looked at again."""
        if train:
            for key in layout.keys:
                if key not in self._pairs:
                    self._pair(key)
            self._ready.add(layout)
        else:
            for key in layout.keys:
                if key not in self._evals:
                    self._evals[key] = self._eval_series(key)
            self._ready_eval.add(layout)

    def _flush_train(self, ch: _Chunk) -> None:
        """The pending training blocks' points into the chunk's buffers, a key's column at a time."""
        b = ch.train
        if not b.steps:
            return
        layout, values, steps, w = _taken(b)
        walls = array("d", b.walls)
        if not ch.timed and not all(map(math.isnan, walls)):
            ch.timed = True
        for i, (key, at, paren) in enumerate(zip(layout.keys, layout.at, layout.parens, strict=True)):
            lines = array("I", map(i.__add__, b.lines))
            buf = ch.buffer(key)
            buf[0].extend(steps)
            buf[1].extend(values[at::w])
            buf[2].extend(lines)
            buf[3].extend(walls)
            if paren:
                buf[4].extend(steps)
                buf[5].extend(values[at + 1::w])
                buf[6].extend(lines)
        b.values, b.steps, b.walls, b.lines = array("d"), [], [], []

    def _flush_eval(self, ch: _Chunk) -> None:
        """The pending evaluation blocks' values into their series, a key's column at a time."""
        b = ch.evals
        if not b.steps:
            return
        layout, values, steps, w = _taken(b)
        evals = self._evals
        nans = array("d", [math.nan]) * len(steps)  # as append adds them: a NaN wall time each when kept
        for i, (key, at) in enumerate(zip(layout.keys, layout.at, strict=True)):
            evals[key].extend(steps, values[at::w], array("I", map(i.__add__, b.lines)), nans, timed=False)
        b.values, b.steps, b.lines = array("d"), [], []

    def _slow_train(self, m: re.Match[str], line: int, st: _State, ch: _Chunk) -> None:
        """A training value line the blocks did not read (or any, in _scan_lines), into the chunk's buffers."""
        key = m.group("key")
        try:
            value = float(m.group("num"))
        except ValueError:
            return
        if key not in self._pairs:
            self._pair(key)
        _put_train(ch.buffer(key), m, value, line, st)
        ch.timed = ch.timed or st.wall == st.wall

    def _structure(self, kind: str | None, m: re.Match[str], line: int, st: _State) -> None:
        """What a line that is not a value says: a step header, an epoch, an evaluation, a checkpoint, the end."""
        log = self.log
        if kind == "stephdr":
            st.mode = "train"
            self._step_header(int(m.group("local")), int(m.group("total")), float(m.group("gstep")),
                              _wall(m.group("time")))
        elif kind == "epoch":
            st.mode = ""
            self._epoch(int(m.group("ep")), int(m.group("eptot")), line, m.group(0))
        elif kind == "evalhdr":
            st.mode = "eval-pending"
            self._evaluation(line)
        elif kind == "evalperf":
            if st.mode == "eval-pending":
                st.mode = "eval"
        elif kind == "training":
            st.mode = ""
        elif kind in ("best", "ckpt"):
            path = (m.group("bestpath") or m.group("ckptpath") or "").strip()
            sm = _STEP_IN_NAME.search(path)
            self._saved(kind == "best", float(sm.group(1)) if sm else st.step, line, m.group(0).strip(), path)
            st.mode = "" if st.mode != "train" else st.mode
        elif kind == "kbd":
            log.events.append(_ev(EventKind.INTERRUPTED, st.step, line, "Keyboard interrupt detected"))
        elif kind == "restored":
            log.events.append(_ev(EventKind.RESUME, float(m.group("rstep")), line, m.group(0).strip()))
        elif kind == "tb":
            log.events.append(_ev(EventKind.TRACEBACK, st.step, line, m.group(0)))
        elif kind == "kept":
            log.events.append(_ev(EventKind.END_OF_RUN, st.step, line, "Run is kept in …"))

    def _epoch(self, epoch: int, of: int, line: int, text: str) -> None:
        st: _State = self.state
        self._epoch_state(epoch, of)
        start = 0.0 if st.step is None else st.step + max(0, st.total - st.local)
        self.log.events.append(_ev(EventKind.EPOCH, start, line, text, epoch=epoch, of=of))

    def _epoch_state(self, epoch: int, of: int) -> None:
        """What an epoch line leaves besides its event: the compiled scanner makes the event itself."""
        self.state.epoch = epoch
        self.log.facts["epoch"] = epoch
        self.log.facts["planned_epochs"] = of

    def _evaluation(self, line: int) -> None:
        st: _State = self.state
        st.eval_step = 0.0 if st.step is None else st.step + max(0, st.total - st.local)
        self.log.events.append(_ev(EventKind.EVALUATION, st.eval_step, line, "EVALUATION"))

    def _take_over(self, ops: list[tuple]) -> None:
        """The state the compiled scanner's lines left: its last step header, epoch and evaluation, in the order
        each first came (the log's facts keep the order the regex path gives them). It appended their events
        itself; the mode it left is set by the caller."""
        for op in ops:
            if op[0] == 0:
                self._step_header(*op[1:])
            elif op[0] == 1:
                self._epoch_state(op[1], op[2])
            else:
                self.state.eval_step = op[1]

    def _saved(self, best: bool, step: float | None, line: int, text: str, path: str) -> None:
        kind = EventKind.BEST_MODEL if best else EventKind.CHECKPOINT
        self.log.events.append(_ev(kind, step, line, text, path=path))

    def _step_header(self, local: int, total: int, step: float, wall: float) -> None:
        st: _State = self.state
        st.step, st.local, st.total, st.wall = step, local, total, wall
        self.log.facts["steps_per_epoch"] = total
        self.log.facts["last_step"] = step

    def _scan_compiled(self, text: str, first_line: int) -> None:
        """scan with the compiled scanner reading the plain lines (value lines of keys this chunk has seen, step
        headers) and the regex the rest: each stops where the other must read. Points go to per-chunk arrays (the
        scanner fills them a column at a time) and into their series at the end, eval values too, so each series
        gets its points in order from whichever path read them."""
        st: _State = self.state
        line, last, pos = first_line, 0, 0
        has_cr = "\r" in text
        count, search = text.count, _MASTER.search
        tkeys: list[str] = []
        tbufs: list[tuple[array, ...]] = []  # per key: step, value, line, wall; step, average, line
        ekeys: list[str] = []
        ebufs: list[tuple[array, ...]] = []  # per key: step, value, line
        lines, flush = CTEXT.coqui_lines, CTEXT.coqui_flush  # type: ignore[union-attr]
        sink = CTEXT.coqui_sink(Event, _SCANNED)  # type: ignore[union-attr]  # the scanner's points until a flush
        timed = False  # a training value with a wall time was read
        while True:
            line += count_breaks(text, last, pos) if has_cr else count("\n", last, pos)
            pos, line, mode, ops = lines(text, pos, line, _MODES.index(st.mode), st.step is not None, st.step or 0.0,
                                         st.wall, st.eval_step is not None, st.eval_step or 0.0, st.local, st.total,
                                         tkeys, ekeys, sink, self.log.events, has_cr)
            if ops:
                self._take_over(ops)
            last, st.mode = pos, _MODES[mode]
            m = search(text, pos)
            if m is None:
                break
            start = m.start()
            line += count_breaks(text, last, start) if has_cr else count("\n", last, start)
            last, pos = start, m.end()
            if has_cr and text[pos - 1] == "\r" and text.startswith("\n", pos):
                pos -= 1  # not between the halves of a \r\n: counted apart, they would be two line breaks
            kind = m.lastgroup
            if kind != "val":
                self._structure(kind, m, line, st)
            elif st.mode == "train" and st.step is not None:
                flush(sink, tbufs, ebufs)  # the scanner's points first: each series gets its points in order
                self._train_value(m, line, st, tkeys, tbufs)
                timed = timed or st.wall == st.wall
            elif st.mode == "eval" and st.eval_step is not None:
                flush(sink, tbufs, ebufs)
                self._eval_buffered(m, line, st, ekeys, ebufs)
        timed = flush(sink, tbufs, ebufs) or timed  # no wall time: extend need not look through them
        pairs = self._pairs
        for key, buf in zip(tkeys, tbufs, strict=True):
            current, running = pairs[key]
            current.extend(buf[0], buf[1], buf[2], buf[3], timed=None if timed else False)
            running.extend(buf[4], buf[5], buf[6], [])
        for key, buf in zip(ekeys, ebufs, strict=True):
            if buf[0]:  # as append adds them: a NaN wall time each when the series keeps wall times
                self._eval_series(key).extend(buf[0], buf[1], buf[2], [math.nan] * len(buf[0]), timed=False)

    def _train_value(self, m: re.Match[str], line: int, st: _State, keys: list[str],
                     bufs: list[tuple[array, ...]]) -> None:
        """The scan loop's hot path, for a value line the compiled scanner left (a new key, an odd number)."""
        key = m.group("key")
        try:
            value = float(m.group("num"))
        except ValueError:
            return
        if key not in keys:
            if key not in self._pairs:
                self._pair(key)
            keys.append(key)
            bufs.append((array("d"), array("d"), array("I"), array("d"), array("d"), array("d"), array("I")))
        _put_train(bufs[keys.index(key)], m, value, line, st)

    def _eval_buffered(self, m: re.Match[str], line: int, st: _State, keys: list[str],
                       bufs: list[tuple[array, ...]]) -> None:
        """_eval_value into the chunk's arrays (the series is made here, at its first value, as there)."""
        key = m.group("key")
        try:
            value = parse_number(m.group("num"))
        except ValueError:
            return
        if key not in keys:
            self._eval_series(key)
            keys.append(key)
            bufs.append((array("d"), array("d"), array("I")))
        buf = bufs[keys.index(key)]
        buf[0].append(st.eval_step)  # type: ignore[arg-type]
        buf[1].append(value)
        buf[2].append(line)

    def _eval_series(self, key: str) -> Series:
        base = classify(key)
        role = Role.EVAL_LOSS if base.role in (Role.TRAIN_LOSS, Role.EVAL_LOSS) else base.role
        return self.series(key, Classified(role, Aggregation.EVAL, base.component), locator=current_locator(key))

    def _pair(self, key: str) -> tuple[Series, Series]:
        base = classify(key)
        pair = self._pairs[key] = (
            self.series(key, Classified(base.role, Aggregation.STEP, base.component), locator=current_locator(key)),
            self.series(key, Classified(base.role, Aggregation.RUNNING, base.component), locator=running_locator(key)),
        )
        return pair

    def forget_series(self) -> None:
        super().forget_series()
        self._pairs: dict[str, tuple[Series, Series]] = {}
        self._evals: dict[str, Series] = {}  # the evaluation series the block path made or found
        self._ready: set[_Layout] = set()       # layouts whose training series are all made
        self._ready_eval: set[_Layout] = set()  # layouts whose evaluation series are all made

    def _eval_value(self, m: re.Match[str], line: int, st: _State) -> None:
        key = m.group("key")
        try:
            value = parse_number(m.group("num"))
        except ValueError:
            return
        self._eval_series(key).append(st.eval_step, value, line)  # type: ignore[arg-type]


def _shape(m: re.Match[str]) -> _Shape:
    """A value line's key, whether it has an average, and its text around its numbers when it has no colour code
    (_Layout matches those lines by that text)."""
    text, (start, end), (ns, ne), (ps, pe) = m.string, m.span(), m.span("num"), m.span("paren")
    if text.find("\x1b", start, end) >= 0:
        return m.group("key"), ps >= 0, None
    if ps < 0:
        return m.group("key"), False, (text[start:ns], text[ne:end])
    return m.group("key"), True, (text[start:ns], text[ne:ps], text[pe:end])


def _put_train(buf: tuple[array, ...], m: re.Match[str], value: float, line: int, st: _State) -> None:
    """A training value line's points into its key's buffers (step, value, line, wall; step, average, line): the
    running average in parentheses when float() reads it."""
    step = st.step
    buf[0].append(step)  # type: ignore[arg-type]
    buf[1].append(value)
    buf[2].append(line)
    buf[3].append(st.wall)
    paren = m.group("paren")
    if paren is not None:
        try:
            avg = float(paren)
        except ValueError:
            return
        buf[4].append(step)  # type: ignore[arg-type]
        buf[5].append(avg)
        buf[6].append(line)


def _taken(b: _Batch) -> tuple[_Layout, array, array, int]:
    """A batch's pending blocks as both flushes take them: (their layout, their values, their steps as an array, the
    values a block holds)."""
    layout = b.layout
    assert layout is not None
    return layout, b.values, array("d", b.steps), layout.width


@lru_cache(maxsize=64)
def _layout(train: bool, lines: tuple[_Shape, ...]) -> _Layout:
    """Layouts shared by every reader: a server reading many runs of one trainer compiles each once."""
    return _Layout(train, lines)


def _wall(stamp: str | None) -> float:
    """Coqui writes local time without a zone: read as UTC, so only differences are meaningful."""
    if not stamp:
        return math.nan
    try:
        y, mo, d = int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])
        secs = int(stamp[11:13]) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])
    except ValueError:
        return math.nan
    return float(_days_from_civil(y, mo, d) * 86400 + secs)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _ev(kind: EventKind, step: float | None, line: int, text: str, **detail: object) -> Event:
    return Event(kind, step, line, text, detail=dict(detail))


def looks_like(head: str) -> bool:
    return "GLOBAL_STEP:" in head and "| > " in head


_COQUI_NAME = re.compile(r"^trainer_\d+_log\.txt$")


def _sniff(p: Probe) -> Detection | None:
    if _COQUI_NAME.match(p.name) or looks_like(p.head):
        return Detection("coqui", "Coqui trainer step blocks")
    return None


FORMAT = FormatSpec(
    "coqui", "Coqui TTS trainer_0_log.txt (step blocks)", open=line_format("coqui", CoquiReader), reader=CoquiReader,
    priority=30,
    sniff=_sniff, suffixes=(".txt",), globs=("**/trainer_*_log.txt",), activation=("**/trainer_*_log.txt",),
    fuzz_seed="fixtures/runs/xtts-prefix/trainer_0_log.txt")
