"""Plain-text trainer stdout, as ``python train.py 2>&1 | tee train.log`` leaves it.

Each line shape comes from a real trainer's output (fixtures/live holds runs by the frameworks):
progress bars (tqdm, with a postfix; Lightning's bar; kohya; HF Trainer's bar before each log
dict), HF Trainer dicts (4.x floats, 5.x quoted strings), Keras ``fit`` (``Epoch 3/12`` then the
epoch's last bar line), nanoGPT (``iter N: loss X``, ``step N: train loss X, val loss Y``), llm.c
(``step N/M | train loss X | norm Y | lr Z``), Megatron/NeMo (``iteration N/ M | lm loss: X | …``),
fairseq (``num_updates=N``), DeepSpeed (``steps: N loss: X``, ``OVERFLOW! Skipping step``),
mmengine, detectron2, build-nanogpt and ``Epoch [N/M], Train Loss: X`` prints.

Every value needs a step, and every series says where its steps came from (``step_basis``):
``step`` (the line names it), ``progress-bar`` (the bar's position, epochs laid end to end),
``epoch``, or ``index`` (the order of HF dicts when no bar precedes them). Lines before the first
step (config dumps, printed source code) are not read as measurements.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import copy
import math
import re
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, groupby, repeat
from operator import call, itemgetter, not_

from ..core.accel import CSTDOUT
from ..core.lines import MAX_MATCH_LINE, lines_within, split_lines
from ..core.model import NUMBER_RE, Event, EventKind, Locator, LogFile, Role, Series, parse_number
from ..core.roles import Classified, RoleMap, classify
from .base import FormatReader, line_format
from .registry import HEAD_BYTES, Detection, FormatSpec, Probe

_NUM = r"(?:" + NUMBER_RE + r")"
# Terminal control: colours and cursor moves (Keras, tqdm's nested bars) and backspaces.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x08]")
# key: value / key=value pairs; keys may be a few words ("Train Loss", "Smoothed Validation Loss").
_PAIR = re.compile(
    r"(?:(?<=^)|(?<=[\s,|{(\[]))['\"]?(?P<key>[A-Za-z_][\w./-]*(?: [A-Za-z_][\w./-]*){0,3})['\"]?"
    r"\s*[:=]\s*\[?(?P<v>" + _NUM + r")(?![\w.])"
)
# HF Trainer's dict: 'key': 1.5 (4.x) or 'key': '1.5' (5.x).
# The closing quote is a group of its own: `findall` gives (key, value, quote) without a match object a pair.
_HF_PAIR = re.compile(r"'(?P<key>[^'\n]{1,80})': '?(?P<v>" + _NUM + r")(?P<q>'?)(?=[,}])")
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)
_drain = collections.deque(maxlen=0).extend  # runs an iterator in C, keeping nothing
_floor, _ceil, _log10, _INF = math.floor, math.ceil, math.log10, math.inf
_HF_DICT = re.compile(r"^\s*\{'[A-Za-z_]")
_KEY_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")  # `_HF_DICT`'s after "{'"
# tqdm: "{desc}: {pct}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{, postfix}]"
_TQDM = re.compile(
    r"(?P<pct>\d{1,3})%\|[^|]{0,200}\|\s{0,4}(?P<n>\d{1,15})/(?P<total>\d{1,15})\s{0,4}\[(?P<inner>[^\]]{0,2000})\]")
# `_TQDM`'s match after a description of spaces only, ASCII blanks and digits (what the compiled `plain_bar` reads):
# each piece can end in one place only, so where this matches `_TQDM`'s search matches with the same numbers.
_PLAIN_BAR = re.compile(
    r" *[0-9]{1,3}%\|[^|]{0,200}\| {0,4}([0-9]{1,15})/([0-9]{1,15}) {0,4}\[([^\]]{0,2000})\]")
# `_PLAIN_BAR` at each line start of lines joined by "\n", the bracket not kept: no piece takes a "\n" (a line holds
# none), so each line gives one match or none, with the numbers `_PLAIN_BAR.match` gives it.
_PLAIN_BARS = re.compile(
    "(?m)^" + _PLAIN_BAR.pattern.replace("[^|]", "[^|\n]").replace(r"\[([^\]]{0,2000})\]", r"\[[^\]\n]{0,2000}\]"))
_TQDM_POSTFIX = re.compile(r"(?:^|, )(?P<key>[A-Za-z_][\w./-]{0,60})=(?P<v>" + _NUM + r")(?:\.0)?(?=,|$)")
_EPOCH_DESC = re.compile(r"\bEpoch\s{0,4}(?P<ep>\d{1,15})(?:\s{0,4}/\s{0,4}(?P<tot>\d{1,15}))?", re.I)
_EVAL_DESC = re.compile(r"valid|eval|test|predict|sanity", re.I)
# Keras: "Epoch 3/12" on its own line, then "26/26 ━━━━ 0s 2ms/step - loss: 0.41 - val_loss: 0.52"
# (Keras 2: "26/26 [=====] - 0s 2ms/step - loss: …").
_KERAS_EPOCH = re.compile(r"^Epoch (?P<ep>\d{1,15})/(?P<tot>\d{1,15})\s*$")
# Keras fit(verbose=2) prints no bar: "16/16 - 1s - 3ms/step - loss: 1.2928 - val_loss: 1.31"
_KERAS_BAR = re.compile(r"^\s*(?P<n>\d{1,15})/(?P<total>\d{1,15}) (?:━|\[[=>.]*\]|- )")
_KERAS_PAIR = re.compile(r" - (?P<key>[A-Za-z_][\w./-]{0,60}): (?P<v>" + _NUM + r")")
# nanoGPT: "iter 100: loss 2.3451, time 12.31ms, mfu 3.20%" and "step 500: train loss 2.1000, val loss 2.2000"
_NANO_ITER = re.compile(r"^iter (?P<step>\d{1,15}): loss (?P<loss>" + _NUM + r"), time (?P<time>" + _NUM + r")ms")
_NANO_EVAL = re.compile(
    r"^step (?P<step>\d{1,15}): train loss (?P<train>" + _NUM + r"), val loss (?P<val>" + _NUM + r")")
# llm.c: "step  750/19560 | loss 4.76 (-1.36z)| norm 0.58 (-1.13z)| lr 6.00e-04 | 4212.08 ms"
_LLMC_STEP = re.compile(r"^step\s+(?P<step>\d{1,15})/(?P<total>\d{1,15})\s*\|")
_LLMC_PAIR = re.compile(r"(?:^|\|)\s*(?P<key>(?:train )?loss|norm|lr)\s+(?P<v>" + _NUM + r")")
_LLMC_VAL = re.compile(r"^val loss (?P<v>" + _NUM + r")\s*$")
_LLMC_VAL_AT = Locator.compile(r"^val loss (?P<v>\S+)")
# Megatron-LM / NeMo: " [2024-05-01 12:00:00] iteration      100/    1000 | … | lm loss: 2.31E+00 | loss scale: …"
# (the timestamp since Megatron-LM core 0.5; older releases start at "iteration")
_MEGATRON = re.compile(r"^\s*(?:\[[^\]]{0,40}\]\s*)?iteration\s+(?P<step>\d{1,15})/\s*(?P<total>\d{1,15})\s*\|")
_MEGATRON_PAIR = re.compile(r"\|\s*(?P<key>[A-Za-z][^|:]{0,60}?):\s*(?P<v>" + _NUM + r")\s*(?=\|)")
# hand-written loops: "step 12: loss 1.5", "Iter 300 | train loss 2.25 | lr 1e-4" (no colon after the key)
_WORDS_STEP = re.compile(r"^(?:step|iter|iteration)\s{1,8}(?P<step>\d{1,15})\s{0,8}[:,|]?\s", re.I)
_WORDS_PAIR = re.compile(
    r"\s*(?P<key>[A-Za-z_][\w./-]{0,40}(?: [A-Za-z_][\w./-]{0,40}){0,2}) (?P<v>" + _NUM + r")\s*")
_WORDS_SEP = re.compile(r"[,|]")
# torchtune's recipes describe their bar as "{epoch}|{global step}|Loss: {loss}" ("3|84|Loss: 0.6489: 10%|…")
_TORCHTUNE = re.compile(r"^(?P<ep>\d{1,15})\|(?P<step>\d{1,15})\|Loss: (?P<v>" + _NUM + r")")
_TORCHTUNE_AT = Locator.compile(r"^\d{1,15}\|\d{1,15}\|Loss: (?P<v>" + _NUM + r")")
_OVERFLOW = re.compile(r"OVERFLOW! Skipping step|Skipping step\. Attempted loss scale", re.I)
# build-nanogpt log.txt: "19072 train 3.051, 19072 val 3.08, 19072 hella 0.30"
_BUILD = re.compile(r"^(?P<step>\d{1,15}) (?P<key>train|val|hella) (?P<v>" + _NUM + r")\s*$")
_EPOCH = re.compile(
    r"Epoch\s*\[\s*(?P<ep>\d{1,15})\s*/\s*(?P<tot>\d{1,15})\s*\]|^Epoch (?P<ep2>\d{1,15})/(?P<tot2>\d{1,15}) - ")
_MMENGINE = re.compile(r"Epoch\((?P<mode>train|val)\)\s*\[(?P<ep>\d{1,15})\]\[\s*(?P<it>\d{1,15})/(?P<n>\d{1,15})\]")
_METRICS_BLOCK = re.compile(r"^\*{5} \w+ metrics \*{5}\s*$")
_STEP_WORD = re.compile(r"(?:^|[\s\[(])(?:step|iter|iteration)\s+(?P<n>\d{1,15})\b(?!\s*/)", re.I)
_LLMC_SHORT = re.compile(r"^s:\d+ (?:trl|tel):")
_STEP_KEYS = {"step", "steps", "s", "iter", "iteration", "global_step", "global step", "it", "num_updates"}
_SKIP_KEYS = _STEP_KEYS | {"epoch", "eta", "total", "rank", "skipped", "v_num"}
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):")
_KILLED = re.compile(r"CANCELLED AT|DUE TO TIME LIMIT|Killed|KeyboardInterrupt|out of memory", re.I)
# Lightning's Trainer announces itself when built and says why fit() returned when it reached its limit.
_LIGHTNING_START = re.compile(r"(?:^|[\s:])GPU available: (?:True|False)\b")
_LIGHTNING_STOPPED = "`Trainer.fit` stopped: "
_ROLE_HINTS = {"trl": Role.TRAIN_LOSS, "tel": Role.EVAL_LOSS, "train": Role.TRAIN_LOSS, "val": Role.EVAL_LOSS}


@dataclass
class _State:
    step: float | None = None
    total: int | None = None
    hf_train_index: int = 0
    hf_dicts: int = 0  # train dicts printed, whatever their place
    # the epoch of the train dict at each place of the count (index mode): a resume's epoch goes back to one of them
    hf_index_epochs: list[float] = field(default_factory=list)
    # progress bars: the training bar's largest total, its last global step, the first epoch number seen
    bar_total: int = 0
    bar_step: float | None = None
    bar_pos: int = -1
    bar_offset: int = 0
    epoch_base: int | None = None
    keras_epoch: int | None = None
    in_metrics_block: bool = False
    # the last progress-bar line without a postfix: parsed only when a value needs its step (most bar lines
    # of a live run are redraws nobody reads)
    pending_bar: str | None = None
    # HF dicts take the bar's step only if the bar moved between the first two train dicts (a log
    # captured without the bar's redraws has one stale position); until then points are pending.
    hf_mode: str | None = None
    hf_first_bar: float | None = None
    hf_pending: list[tuple[str, int, int]] = field(default_factory=list)
    # the last train dict's step and epoch, and the steps per epoch the bar showed at its freshest: a bar that did
    # not redraw between two dicts (tqdm redraws at most every 0.1 s) lags, and the dict's epoch gives its step
    hf_last: tuple[float, float] | None = None
    hf_spe: float = 0.0
    hf_epochs: list[tuple[float, float, float]] = field(default_factory=list)  # (epoch low, high, bar) of recent dicts
    # the text a bar's postfix last showed for each key: a repeated display is not a new measurement
    shown: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=1024)
def pair_locator(key: str) -> Locator:
    return Locator.compile(r"['\"]?" + re.escape(key) + r"['\"]?\s*[:=]\s*['\"\[]?(?P<v>" + _NUM + r")")


@lru_cache(maxsize=1024)
def word_locator(key: str) -> Locator:
    return Locator.compile(r"(?:^|\||: |, )\s*" + re.escape(key) + r"\s+(?P<v>" + _NUM + r")")


def clean(line: str) -> str:
    """The line as a terminal shows it: without colour codes, cursor moves and backspaces. Cursor moves up alone (tqdm's
    nested bars, HF's evaluation dicts) are removed by `str.replace`, as `_CONTROL` removes each (a whole match),
    when no other escape is left: the regex took 0.2 µs a character of 170k bars joined, the replace a twentieth."""
    if "\x1b" in line or "\x08" in line:
        plain = line.replace("\x1b[A", "")
        return plain if "\x1b" not in plain and "\x08" not in plain else _CONTROL.sub("", line)
    return line


class TextStdoutReader(FormatReader):
    format = "text"
    pairs_first = True  # `split_lines` takes the feed's count of breaks for its eight searches
    chunk = None if CSTDOUT is not None else 1 << 20  # the pure read's lines of a chunk held in the caches

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()

    def snapshot(self) -> tuple[_State, list[float], int]:
        """The state as the provisional tail's mark keeps it, without copying the epochs of every train dict (a
        copy a mark, at every update, made the re-judge after one append grow with the log): the list itself and
        its length. It is only appended to; a resume that cuts it replaces it (``_hf_index_resume``), so the
        list kept here holds what it held at the mark up to that length."""
        st: _State = self.state
        epochs, st.hf_index_epochs = st.hf_index_epochs, []
        try:
            return copy.deepcopy(st), epochs, len(epochs)
        finally:
            st.hf_index_epochs = epochs

    def restore(self, state: tuple[_State, list[float], int]) -> None:
        st, epochs, n = state
        del epochs[n:]
        st.hf_index_epochs = epochs
        self.state = st

    def scan(self, text: str, first_line: int) -> None:
        """Each line through `_line`, except the two kinds most lines of a live run are, whose outcome is known
        without the call: a progress bar's redraw without a postfix (no ``=``, nothing `clean` removes, within
        `MAX_MATCH_LINE`, none of the strings `_line` looks for before it: the Lightning stop and GPU lines,
        torchtune's ``|Loss: ``) only becomes the pending bar, and a line of blanks (tqdm clearing its bar) only
        closes a metrics block, as no pattern matches it and it holds no ``=``."""
        st: _State = self.state
        line_at = self._line
        if CSTDOUT is not None:  # the same lines cleaned in C, without the redraws and blanks nothing observes,
            # and the plain HF dicts of the bar's mode read there over the state's fields (`_hf_dict`'s C twin)
            CSTDOUT.stdout_scan(text, first_line, MAX_MATCH_LINE, line_at, st, self.log.facts, self._series_by_keys())
            return
        counted = self.breaks
        lines = split_lines(text, None if counted is None or self.pairs is None else sum(counted) - self.pairs)
        # each of `_line`'s strings holds one of these letters: a search for one character is a fraction of one for
        # a string (a 4 MB chunk of 2-byte text: 0.3 ms, "|Loss: " 2.2 ms), and most chunks hold none of them
        letters = "L" in text or "G" in text or "`" in text
        if letters and ("|Loss: " in text or "`Trainer.fit` " in text or "GPU available: " in text):
            for offset, line in enumerate(lines):
                if not line:
                    continue
                if ("%|" in line and "=" not in line and len(line) <= MAX_MATCH_LINE and "\x1b" not in line
                        and "\x08" not in line and "|Loss: " not in line and "`Trainer.fit` " not in line
                        and "GPU available: " not in line):
                    st.pending_bar = line
                elif line.isspace():
                    st.in_metrics_block = False
                else:
                    line_at(clean(line[:MAX_MATCH_LINE]), first_line + offset, st)
            return
        escapes = "\x1b" in text or "\x08" in text
        # Whether a line holding "%|" is a redraw by that alone: no "=" and no line past the bound in the chunk, and
        # no escape whose removal could make one of `_line`'s strings (none without one of the letters). Three
        # tests a redraw were most of a 100 MB HF stdout's loop: each a call that scans the whole line.
        plain = "=" not in text and lines_within(text, MAX_MATCH_LINE) and not (escapes and letters)
        self._scan_redraws(lines, first_line, escapes, plain)

    def _scan_redraws(self, lines: list[str], first_line: int, escapes: bool, plain: bool = False) -> None:
        """`scan` of a chunk no raw line of which holds a string `_line` looks for before a progress bar: a redraw
        (a bar without "=", within the bound) is kept until a line that observes it, and cleaned only then. A
        redraw with escapes goes to `_line` as before when its cleaned text may hold such a string (a removed escape
        can join one: each holds an "L", a "G" or a backquote). 2.1M lines of a 100 MB HF stdout, 1.7M of them
        redraws, made nine `in` tests and an attribute store each, and its 270k nested redraws (ending in a cursor
        move) a `clean` and a `_line` call each. A line that is an HF dict as written (no escape, no bar: `_line`
        finds none of its other strings in this chunk) goes to `_hf_dict` without `_line`'s tests. ``plain``: the
        chunk holds no line a "%|" alone does not make a redraw (`scan`), so the line's other tests are left out."""
        st: _State = self.state
        line_at = self._line
        bar = None
        # a plain chunk's HF dicts as written, each with the redraw before it, read together (`_hf_batch`) before the
        # next line `_line` reads: a bar there adds no point (no "="), so no series is appended to in between
        batch: list[tuple[str | None, str, int]] | None = [] if plain else None
        for n, line in enumerate(lines, first_line):
            if "%|" in line and (plain or ("=" not in line and len(line) <= MAX_MATCH_LINE and not (
                    escapes and ("\x1b" in line or "\x08" in line) and ("L" in line or "G" in line or "`" in line)))):
                bar = line
            elif not line:
                continue
            elif (line[:2] == "{'" and line[2:3] in _KEY_START and "%|" not in line and len(line) <= MAX_MATCH_LINE
                  and not (escapes and ("\x1b" in line or "\x08" in line))):  # `_HF_DICT` matches
                if batch is not None:
                    batch.append((bar, line, n))
                else:  # a batch of one: `_hf_batch` reads it as `_line` reads a dict whose raw line is its clean text
                    self._hf_batch([(bar, line, n)], st)
                bar = None
            elif line.isspace():
                st.in_metrics_block = False  # read by `_line` only, never by an HF dict
            else:
                line = clean(line[:MAX_MATCH_LINE])
                if escapes and (line.isspace() or not line):
                    st.in_metrics_block = False  # all `_line` does with a line of blanks (tqdm's nested bar cleared)
                    continue
                if (line[:2] == "{'" and escapes and "%|" not in line and "`Trainer.fit` " not in line
                        and "GPU available: " not in line and _HF_DICT.match(line)):
                    # a dict after a cursor move (HF's evaluation dict): what `_line` does with it, without its tests
                    if batch is not None:
                        batch.append((bar, line, n))
                    else:
                        self._hf_batch([(bar, line, n)], st)
                    bar = None
                    continue
                if batch:
                    self._hf_batch(batch, st)
                    batch = []
                if bar is not None:
                    st.pending_bar, bar = clean(bar), None
                line_at(line, n, st)
        if batch:
            self._hf_batch(batch, st)
        if bar is not None:
            st.pending_bar = clean(bar)

    def _hf_batch(self, batch: list[tuple[str | None, str, int]], st: _State) -> None:
        """HF dicts as written, each with the redraw before it (or None) and its line number, read as `_line` reads
        them one at a time (the redraw made the pending bar, `_settle_bar`, `_hf_dict`). In the bar's decided mode,
        the dicts of a chunk (154k train and 15k evaluation dicts of a 100 MB HF stdout) are read together when each
        set of keys reads as columns (`_hf_groups`): `_hf_together`. Else each run of dicts with the same first key is
        a batch of its own, and a run of one (or of keys that do not read as columns) is read one dict at a time."""
        settle, hf_dict = self._settle_bar, self._hf_dict
        together = len(batch) > 1  # the rest's reading together not tried yet
        for k, (bar, line, n) in enumerate(batch):
            if together and st.hf_mode == "bar" and not st.hf_index_epochs and st.bar_step is not None:
                together = False  # tried once: the mode decided (by the first two train dicts), or a bar seen
                if len(batch) - k > 1 and self._hf_rest(batch[k:] if k else batch, st):
                    return
            if bar is not None:
                st.pending_bar = clean(bar)
            settle(st)
            hf_dict(line, n, st)

    def _hf_rest(self, batch: list[tuple[str | None, str, int]], st: _State) -> bool:
        """`_hf_batch` of dicts in the bar's decided mode: together (`_hf_together`) when each set of keys reads as
        columns, else each run of one first key as a batch of its own; False (nothing read) for one run that does
        not read as columns."""
        groups = _hf_groups(list(map(_SECOND, batch)))
        # a series with wall times or records takes `Series.append`: `_hf_dict`'s
        if groups is not None and not any(any(self._hf_appends(g[1], "progress-bar")[0]) for g in groups):
            self._hf_together(batch, groups, st)
            return True
        runs = [list(run) for _, run in groupby(batch, key=lambda entry: _first_key(entry[1]))]
        if len(runs) == 1:
            return False
        for run in runs:
            self._hf_batch(run, st)
        return True

    def _hf_together(self, batch: list[tuple[str | None, str, int]], groups: list[_Group], st: _State) -> None:
        """`_hf_dict` of each dict of a batch, in the bar's decided mode with no count place kept (`_decide_hf_steps`
        and `_hf_index_resume` then do nothing), the dicts' pairs read as columns by set of keys: the steps in order
        (`_bar_steps` or `_settle_bar`, then `_hf_lags`), then each series' arrays extended once. `_hf_dict`'s parse,
        its bookkeeping and three appends a dict were 7 µs of its 8."""
        if len(groups) == 1:
            _, _, kind, _, epochs, quoted = groups[0]
            evals = [bool(kind)] * len(batch)
        else:  # each dict's epoch in the batch's order
            epochs, quoted, evals = [""] * len(batch), [False] * len(batch), [False] * len(batch)
            for idx, _, kind, _, texts, marks in groups:
                _drain(map(epochs.__setitem__, idx, texts))
                _drain(map(quoted.__setitem__, idx, marks))
                _drain(map(evals.__setitem__, idx, repeat(bool(kind))))
        steps = self._bar_steps(st, list(map(_FIRST, batch)))
        if steps is not None:
            steps = self._hf_lags(st, epochs, quoted, steps, evals)
        else:  # a bar `_bar_steps` does not read: each settled, and its dict's step found, in turn
            settle, lag = self._settle_bar, self._hf_lag
            steps = []
            for (bar, _, _), epoch, mark, is_eval in zip(batch, epochs, quoted, evals, strict=True):
                if bar is not None:
                    st.pending_bar = clean(bar)
                settle(st)  # the bar's step never goes back to None: the dict's basis stays the bar's
                steps.append(lag(st, ("epoch", epoch, mark), st.bar_step, is_eval))  # type: ignore[arg-type]
        # what `_hf_dict` counts and sets at each train dict (neither `_settle_bar` nor `_hf_lags` reads these)
        trains = len(batch) - evals.count(True)
        if trains:
            st.hf_train_index += trains
            st.hf_dicts += trains
            self.log.facts["hf_train_dicts"] = st.hf_dicts
        st.step = steps[-1]
        by_keys, lines, last = self._series_by_keys(), array("I", map(_THIRD, batch)), -1
        for idx, keys, _, columns, _, _ in groups:  # in the order of their first dicts: the series are made so
            if keys:
                arrays = by_keys[keys][1]
                at_steps = list(map(steps.__getitem__, idx)) if len(idx) < len(batch) else steps
                at_lines = array("I", map(lines.__getitem__, idx)) if len(idx) < len(batch) else lines
                for j, values in enumerate(columns):
                    arrays[5 * j].extend(at_steps)
                    arrays[5 * j + 1].extend(values)
                    arrays[5 * j + 2].extend(at_lines)
                last = max(last, idx[-1])
        if last >= 0:
            self.log.facts["last_step"] = steps[last]

    def _bar_steps(self, st: _State, bars: list[str | None]) -> list[float] | None:
        """The bar's step at each dict of a batch, as `_settle_bar` leaves it after the redraw before the dict (None: no
        redraw since the last line that read one), when every redraw is a bar `_PLAIN_BAR` reads whose total is not
        past the training bar's: then each only moves the position (`_bar_position`), which needs no call. The bars are
        read by one `findall` over them joined (154k bars of a 100 MB HF stdout took a `_settle_bar`, a `_plain_bar`
        and a `_bar_position` call each: 1.3 µs a dict). The bracket's postfix is not looked at: without an "=" it
        holds no pair `_tqdm` reads (a batch is of a plain chunk, which holds none). None (nothing read) for any other
        bar."""
        if bars[0] is None:
            self._settle_bar(st)  # a redraw left pending (by the last chunk, or before a line `_line` read)
        else:
            st.pending_bar = None  # the first dict's redraw takes its place unread
        shown = list(filter(None, bars))
        text = "\n".join(shown)
        text = clean(text)  # of each line: no escape holds a "\n"
        found = _PLAIN_BARS.findall(text)
        if len(found) != len(shown) or "=" in text:
            return None
        totals = list(map(int, map(_SECOND, found)))
        if max(totals, default=0) > st.bar_total:
            return None  # a longer bar: `_bar_position` makes it the training bar
        positions = iter(zip(map(int, map(_FIRST, found)), totals, strict=True))
        steps = []
        step, bar_total, bar_pos = st.bar_step, st.bar_total, st.bar_pos
        for bar in bars:
            if bar is not None:
                pos, total = next(positions)
                if total == bar_total:  # else a nested bar: `_bar_position` leaves everything
                    if pos < bar_pos:  # the bar again from its start: `_bar_position` sets the offset
                        st.bar_pos = bar_pos
                        step = self._bar_position(st, pos, total)
                    else:
                        step = float(st.bar_offset + pos)
                    bar_pos = pos
            steps.append(step)
        st.bar_pos, st.bar_step = bar_pos, step
        return steps  # type: ignore[return-value]

    def _line(self, line: str, n: int, st: _State) -> None:
        log = self.log
        if "`Trainer.fit` " in line and _LIGHTNING_STOPPED in line:  # often after the bar's last redraw
            log.events.append(Event(EventKind.END_OF_RUN, st.step, n, line[line.index(_LIGHTNING_STOPPED):][:200]))
        elif "GPU available: " in line and _LIGHTNING_START.search(line):
            # TL-RUN-INCOMPLETE sets the Trainer's start against the absence of the stop line after it
            log.facts["lightning_start_line"] = n
        if "|Loss: " in line and line[:1].isdigit() and self._torchtune(line, n, st):
            return
        if "%|" in line:  # a progress bar first: most lines of a live run are its redraws
            if "=" not in line:
                st.pending_bar = line
                return
            self._settle_bar(st)
            if self._tqdm(line, n, st):
                return
        if "{'" in line and _HF_DICT.match(line):
            self._settle_bar(st)
            self._hf_dict(line, n, st)
            return
        if line.startswith("Traceback") and _TRACEBACK.match(line):
            log.events.append(Event(EventKind.TRACEBACK, st.step, n, line.strip()))
            return
        if st.step is not None and _KILLED.search(line):
            log.events.append(Event(EventKind.INTERRUPTED, st.step, n, line.strip()[:200]))
        if self._structured(line, n, st):
            return
        if st.in_metrics_block:
            if "=" in line and not line.startswith("*"):
                return  # "  train_loss = 2.13": the run's summary, not a point of the curve
            st.in_metrics_block = False
        if line.startswith("*****") and _METRICS_BLOCK.match(line):
            st.in_metrics_block = True
            return
        self._generic(line, n, st)

    # -- shapes with a fixed layout ---------------------------------------------------------
    def _structured(self, line: str, n: int, st: _State) -> bool:
        log = self.log
        m = _BUILD.match(line)
        if m:
            st.step = float(m.group("step"))
            key = m.group("key")
            self._point(key, m.group("v"), n, st.step, word_locator(key), _ROLE_HINTS.get(key))
            return True
        if line.startswith("step"):
            m = _LLMC_STEP.match(line)
            if m:
                st.step, st.total = float(m.group("step")), int(m.group("total"))
                log.facts["max_steps"] = st.total
                for pm in _LLMC_PAIR.finditer(line):
                    key = pm.group("key")
                    self._point(key, pm.group("v"), n, st.step, word_locator(key))
                return True
            m = _NANO_EVAL.match(line)
            if m:
                st.step = float(m.group("step"))
                self._point("train loss", m.group("train"), n, st.step, word_locator("train loss"))
                self._point("val loss", m.group("val"), n, st.step, word_locator("val loss"), Role.EVAL_LOSS)
                return True
        if line.startswith("Overriding: max_iters = "):  # nanoGPT's configurator echoes each override
            tail = line[len("Overriding: max_iters = "):].strip()
            if tail.isdigit() and len(tail) <= 15:
                log.facts["max_steps"] = int(tail)
            return True
        if line.startswith("iter"):
            m = _NANO_ITER.match(line)
            if m:
                st.step = float(m.group("step"))
                self._point("loss", m.group("loss"), n, st.step, word_locator("loss"))
                return True
        if line[:1] in "sSiI" and self._words(line, n, st):
            return True
        if line.startswith("val loss"):
            m = _LLMC_VAL.match(line)
            if m:
                if st.step is not None:
                    self._point("val loss", m.group("v"), n, st.step, _LLMC_VAL_AT, Role.EVAL_LOSS)
                return True
        if "iteration" in line:
            m = _MEGATRON.match(line)
            if m:
                st.step, st.total = float(m.group("step")), int(m.group("total"))
                log.facts["max_steps"] = st.total
                for pm in _MEGATRON_PAIR.finditer(line + "|"):
                    key = pm.group("key").strip()
                    self._point(key, pm.group("v"), n, st.step, pair_locator(key))
                return True
        if "OVERFLOW" in line or "Skipping step" in line:
            m = _OVERFLOW.search(line)
            if m:
                log.facts["skipped_steps"] = int(log.facts.get("skipped_steps", 0)) + 1
                log.events.append(Event(EventKind.SKIPPED_STEP, st.step, n, line.strip()[:200]))
                return True
        if line.startswith("Epoch "):
            m = _KERAS_EPOCH.match(line)
            if m:
                st.keras_epoch = int(m.group("ep"))
                log.facts["planned_epochs"] = int(m.group("tot"))
                # An epoch begun and never closed by its `N/N` bar line: the run stopped inside it (killed, a
                # crash, a time limit). An epoch count short of the plan is not enough, as EarlyStopping ends a
                # healthy run after a closed epoch without a word at its default verbosity.
                log.facts["unfinished_epoch"] = st.keras_epoch
                return True
        if st.keras_epoch is not None and "/" in line:
            m = _KERAS_BAR.match(line)
            if m:
                # Only the epoch's last bar line holds the epoch's values; earlier ones are running means.
                if m.group("n") == m.group("total"):
                    log.facts.pop("unfinished_epoch", None)
                    for pm in _KERAS_PAIR.finditer(line):
                        key = pm.group("key")
                        self._point(key, pm.group("v"), n, float(st.keras_epoch), pair_locator(key), None, "epoch")
                return True
        return False

    def _words(self, line: str, n: int, st: _State) -> bool:
        """``step N`` then ``key value`` pieces, each piece nothing else: prose is never read as a pair."""
        m = _WORDS_STEP.match(line)
        if m is None or ":" in line[m.end():] or "=" in line:
            return False
        pairs = [pm for piece in _WORDS_SEP.split(line[m.end():]) if (pm := _WORDS_PAIR.fullmatch(piece))]
        if not pairs:
            return False
        st.step = float(m.group("step"))
        for pm in pairs:
            key = pm.group("key")
            self._point(key, pm.group("v"), n, st.step, word_locator(key), _ROLE_HINTS.get(key))
        return True

    def _torchtune(self, line: str, n: int, st: _State) -> bool:
        """Each redraw of a torchtune recipe's bar names the global step and that step's loss."""
        m = _TORCHTUNE.match(line)
        if m is None:
            return False
        st.step = float(m.group("step"))
        if st.shown.get("loss") != m.group(0):  # the closing redraw repeats the last step
            st.shown["loss"] = m.group(0)
            self._point("loss", m.group("v"), n, st.step, _TORCHTUNE_AT)
        return True

    # -- progress bars ----------------------------------------------------------------------
    def _settle_bar(self, st: _State) -> None:
        """The pending bar read, as it was the last position before the line that reads the step. The compiled
        `plain_bar` reads the common one (a blank description, no postfix: HF's bar before each dict) whose only
        effect is the position `_bar_position` takes (`_PLAIN_BAR` without it: 169k bars of a 100 MB HF stdout made a
        `_TQDM` search, a `_bar_desc` and a split of the bracket each); any other goes through `_tqdm`'s regex."""
        if st.pending_bar is not None:
            line, st.pending_bar = st.pending_bar, None
            if CSTDOUT is not None:
                plain = CSTDOUT.plain_bar(line)
                if plain is not None:
                    self._bar_position(st, plain[0], plain[1])
                    return
            elif (plain := _plain_bar(line)) is not None:
                self._bar_position(st, plain[0], plain[1])
                return
            self._tqdm(line, 0, st)

    def finish(self) -> None:
        self._settle_bar(self.state)

    def _tqdm(self, line: str, n: int, st: _State) -> bool:
        m = _TQDM.search(line)
        if m is None:
            return False
        desc = line[:m.start()]
        known = _bar_desc(desc)  # (an evaluation bar?, epoch, planned epochs): a bar repeats its description
        if known[0]:
            return True  # an evaluation bar: its position is not the training step
        pos, total = int(m.group("n")), int(m.group("total"))
        if known[1] is not None:
            ep = known[1]
            if st.epoch_base is None:
                st.epoch_base = ep
            if known[2] is not None:
                self.log.facts["planned_epochs"] = known[2]
            st.bar_total = max(st.bar_total, total)
            step = float((ep - st.epoch_base) * total + pos)
            if st.bar_step is not None and step < st.bar_step:
                step = st.bar_step  # the bar was reset before its description named the next epoch
        else:
            bar = self._bar_position(st, pos, total)
            if bar is None:
                return True
            step = bar
        st.bar_step = step
        inner = m.group("inner")
        parts = inner.split(", ", 2)
        if len(parts) < 3:
            return True
        for pm in _TQDM_POSTFIX.finditer(parts[2]):
            key = pm.group("key")
            if key.lower() in _SKIP_KEYS:
                continue
            text = pm.group("v")
            if st.shown.get(key) == text:
                continue
            st.shown[key] = text
            self._point(key, text, n, step, postfix_locator(key), None, "progress-bar")
        return True

    def _bar_position(self, st: _State, pos: int, total: int) -> float | None:
        """The step of a bar without an epoch in its description (``pos``/``total``), made the bar's step; None for a
        nested bar, whose position is not the training step."""
        if total < st.bar_total:
            return None  # a nested bar (HF's evaluation loop) under the training bar
        if total > st.bar_total:
            st.bar_total = total
            self.log.facts["max_steps"] = total
        elif pos < st.bar_pos:
            # the same bar again: after it completed, another pass of an epoch loop without a name; cut short,
            # a new attempt of the run (a resume into the same stdout), whose bar counts from its own start
            st.bar_offset = st.bar_offset + total if st.bar_pos >= total else 0
        st.bar_pos = pos
        step = st.bar_step = float(st.bar_offset + pos)
        return step

    # -- HF Trainer dicts -------------------------------------------------------------------
    def _hf_dict(self, line: str, n: int, st: _State) -> None:
        """HF Trainer prints a dict per log call without the step: the bar before it has the step. `_hf_parsed`
        finds the closing summary, an evaluation key, the (first) epoch and the values; the points go through the
        series the dict's keys gave last time (`_series_by_keys`) and their arrays directly, in one compiled
        `hf_append` once the steps' mode is decided (169k dicts of a 100 MB HF stdout made 523k `_point` calls, then
        1.57M array appends from Python). With the compiled pass, a plain dict of the bar's mode whose keys' series
        exist never comes here: `stdout_scan` reads it over the state's fields (this and `_hf_lag` in C)."""
        keys, values, epoch, kind = _hf_parsed(line)
        if kind == 2:
            at = st.bar_step if st.bar_step is not None else float(st.hf_train_index)
            self.log.events.append(Event(EventKind.END_OF_RUN, at, n, "end-of-run summary"))
            return
        is_eval = kind == 1
        if not is_eval:
            st.hf_train_index += 1
            st.hf_dicts += 1
            # The Trainer prints a closing `train_runtime` dict through the same callback when train() returns:
            # TL-RUN-INCOMPLETE sets the count of train dicts against its absence (END_OF_RUN above).
            self.log.facts["hf_train_dicts"] = st.hf_dicts
            if st.hf_mode is None:
                self._decide_hf_steps(st)
            if st.hf_mode != "bar" or st.hf_index_epochs:  # in bar mode it only empties the places: once is enough
                self._hf_index_resume(st, epoch)
        if st.hf_mode != "index" and st.bar_step is not None:
            step, basis = st.bar_step, "progress-bar"
            step = self._hf_lag(st, epoch, step, is_eval)
        else:
            step, basis = float(st.hf_train_index), "index"
        st.step = step
        if not keys:
            return
        pending = st.hf_pending if st.hf_mode is None and basis == "progress-bar" else None
        if pending is None and CSTDOUT is None:
            apps = self._hf_appends(keys, basis)
            if not any(apps[0]):  # no series has a wall time or a record: the loop below, a `map` an array kind
                _drain(map(call, apps[1], repeat(step)))
                _drain(map(call, apps[2], values))
                _drain(map(call, apps[3], repeat(n)))
                self.log.facts["last_step"] = step
                return
        by_keys = self._series_by_keys()
        known = by_keys.get(keys)
        if known is None:
            known = by_keys[keys] = self._hf_series(keys, basis)
        series, arrays = known
        if pending is None and CSTDOUT is not None and CSTDOUT.hf_append(arrays, values, step, n):
            self.log.facts["last_step"] = step  # the loop below in C: no series had a wall time or a record
            return
        for s, value in zip(series, values, strict=True):
            if s.walls or s.records:
                s.append(step, value, n)
            else:  # Series.append without a wall time or record: its three arrays
                s.steps.append(step)
                s.values.append(value)
                s.lines.append(n)
            if pending is not None:
                pending.append((s.key, len(s) - 1, st.hf_train_index))
        self.log.facts["last_step"] = step  # what `_point` sets at each point: nothing reads it in between

    def _hf_series(self, keys: tuple[str, ...], basis: str) -> tuple[tuple[Series, ...], tuple[array, ...]]:
        """The series of each key, made (in the keys' order, with this dict's basis) when the key is new, and their
        arrays as the compiled `hf_append` takes them (steps, values, lines, walls, records of each: a series keeps
        its arrays, `Series.truncate` cuts them in place)."""
        memo = self._series_memo()
        out = []
        for key in keys:
            s = memo.get(key)
            if s is None:
                s = memo[key] = self.series(key, classify(key), locator=pair_locator(key), step_basis=basis)
            out.append(s)
        return tuple(out), tuple(a for s in out for a in (s.steps, s.values, s.lines, s.walls, s.records))

    def _hf_appends(self, keys: tuple[str, ...], basis: str) -> tuple[tuple, ...]:
        """For the pure loop of `_hf_dict`: the walls and records arrays of the keys' series (`_series_by_keys`, made
        with this basis when new), and the bound `append` of their steps, values and lines arrays, kept by the keys
        (a series keeps its arrays; `forget_series` drops both memos). 169k dicts of a 100 MB HF stdout made 1.57M
        appends, with two attribute loads each, in bytecode."""
        memo = self.__dict__.get("_hf_appends_memo")
        if memo is None:
            memo = self.__dict__["_hf_appends_memo"] = {}
        got = memo.get(keys)
        if got is None:
            by_keys = self._series_by_keys()
            known = by_keys.get(keys)
            if known is None:
                known = by_keys[keys] = self._hf_series(keys, basis)
            arrays = known[1]
            steps, values, lines = arrays[0::5], arrays[1::5], arrays[2::5]
            got = memo[keys] = (arrays[3::5] + arrays[4::5], tuple(a.append for a in steps),
                                tuple(a.append for a in values), tuple(a.append for a in lines))
        return got

    def _series_by_keys(self) -> dict[tuple[str, ...], tuple[tuple[Series, ...], tuple[array, ...]]]:
        """The series of an HF dict's keys, by the tuple of its keys (the Trainer prints the same keys in the same
        order at each log call): `_series_memo`'s series, dropped with it by `forget_series`."""
        memo = self.__dict__.get("_series_by_keys_memo")
        if memo is None:
            memo = self.__dict__["_series_by_keys_memo"] = {}
        return memo

    def _hf_lag(self, st: _State, m: tuple[str, str, bool] | None, step: float, is_eval: bool = False) -> float:
        """The step of a dict whose bar lags: `_hf_lags` of one dict."""
        return self._hf_lags(st, [m[1] if m is not None else None], [m is not None and m[2]], [step], [is_eval])[0]

    def _hf_lags(self, st: _State, epochs: list[str | None], quoted: list[bool], steps: list[float],
                 evals: list[bool]) -> list[float]:
        """The steps of dicts whose bar lags (tqdm redraws at most every 0.1 s, so the position printed before a dict
        is often a few steps behind it), each dict's in turn: a progress-bar counter is never put over what the log
        prints, and HF prints each dict's epoch, global step / steps per epoch. The steps per epoch are the smallest
        whole number that makes every epoch printed so far a whole step (within its printed digits) and no step
        behind its bar; the epoch then gives the step when its digits pin it to one. ``epochs``: each dict's first
        ``epoch`` value text or None, ``quoted`` whether it was quoted, ``steps`` the bar's step at each, ``evals``
        whether each is an evaluation dict (which does not move the train dicts' last step). A batch's dicts in one
        call: the state's fields are read and written once (169k calls, one a dict, were 1 µs each)."""
        out: list[float] = []
        put = out.append
        spe_f, kept, last = st.hf_spe, st.hf_epochs, st.hf_last
        spe = int(spe_f) if spe_f >= 1 else 1  # the smallest whole number tried: the last one found
        fitted = False
        bar_total = st.bar_total
        limit = (bar_total if bar_total > 1 else 1) * 4 + 64
        low = high = half_q = 0.0  # a decade's inside, where a 5.x epoch's half digit is ``half_q``
        for epoch, mark, step, is_eval in zip(epochs, quoted, steps, evals, strict=True):
            if epoch is None or spe_f < 0:
                put(step)  # no epoch pins the step, or no whole number of steps per epoch fitted
                continue
            try:
                ep = float(epoch)
            except ValueError:
                put(step)
                continue
            if not 0 < ep < _INF:
                put(step)  # nan / inf, printed when the loader's length is unknown
                continue
            if mark:  # 5.x quotes its values, formatted to 4 significant digits ('2.5' is 2.500)
                if not low <= ep < high:
                    e = _floor(_log10(ep))
                    half_q = 0.5 * 10.0 ** (e - 3) + 1e-12
                    # log10 rounds to e's side of a power of ten only next to it: away from the decade's ends, the
                    # next epochs' e is this one (a call each of log10 and floor was a sixth of this loop)
                    low, high = (1.001 * 10.0 ** e, 9.99 * 10.0 ** e) if ep > 1e-290 else (0.0, 0.0)
                half = half_q
            else:  # 4.x prints the float as rounded: its decimals are its precision
                half = 0.5 * 10.0 ** -(len(epoch.split(".")[1]) if "." in epoch else 0) + 1e-12
            lo, hi = ep - half, ep + half
            kept.append((lo, hi, step))  # the 16 last are kept: cut when the search reads them, and at the end
            # The steps per epoch found last time satisfy every epoch kept before this one (dropping the oldest only
            # removes a condition), so while the new epoch fits them too, the search below would stop at once:
            # check only the new one (169k dicts of a 100 MB HF stdout re-ran up to 16 conditions each).
            if not (spe <= limit and (top := _floor(hi * spe)) >= step and top >= _ceil(lo * spe)):
                del kept[:-16]
                while spe <= limit and not all(_floor(hi * spe) >= max(_ceil(lo * spe), bar)
                                               for lo, hi, bar in kept):
                    spe += 1
                if spe > limit:
                    spe_f = -1.0  # no whole number fits: the epochs are not global step / steps per epoch
                    put(step)
                    continue
            fitted = True
            if 2 * half * spe < 1:
                pinned = float(round(ep * spe))
                if pinned > step:
                    step = pinned
            if not is_eval:
                if last is not None and step <= last[0] and ep > last[1]:
                    step = last[0] + 1  # the epoch's digits do not pin the step, and the bar did not move
                last = (step, ep)
            put(step)
        del kept[:-16]
        st.hf_spe = spe_f if spe_f < 0 or not fitted else float(spe)
        st.hf_last = last
        return out

    @staticmethod
    def _hf_index_resume(st: _State, m: tuple[str, str, bool] | None) -> None:
        """A train dict's place when the count of dicts is the step (no bar): a resume into the same stdout prints
        the dicts from its checkpoint's step again, and only their `epoch` (global step / steps per epoch, rising
        within an attempt) shows it. A dict whose epoch is below the last one's takes the place after the earlier
        dicts of lower epochs, so the steps go back at the seam as a logged step counter's do. ``m``: the dict's first
        ``epoch`` pair or None."""
        try:
            ep = float(m[1]) if m is not None else math.nan
        except ValueError:
            ep = math.nan
        if not math.isfinite(ep):
            return
        if st.hf_mode == "bar":  # the bar's global step is the step: no place of the count to find
            st.hf_index_epochs = []
            return
        epochs = st.hf_index_epochs
        if epochs and ep < epochs[-1] and st.hf_mode == "index":
            epochs = st.hf_index_epochs = epochs[:bisect.bisect_left(epochs, ep)]  # a new list: see snapshot
            st.hf_train_index = len(epochs) + 1
        if len(epochs) >= st.hf_train_index:
            epochs = st.hf_index_epochs = epochs[:st.hf_train_index - 1]
        epochs.extend([ep] * (st.hf_train_index - len(epochs)))

    def _decide_hf_steps(self, st: _State) -> None:
        if st.hf_mode is not None:
            return
        if st.hf_train_index == 1:
            st.hf_first_bar = st.bar_step
            if st.bar_step is None:
                st.hf_mode = "index"
            return
        if st.bar_step is not None and st.bar_step != st.hf_first_bar:
            st.hf_mode = "bar"
        else:
            st.hf_mode = "index"
            for key, i, index in st.hf_pending:  # the one stale bar position was not their step
                s = self.log.series.get(key)
                if s is not None and i < len(s):
                    s.steps[i] = float(index)
                    s.step_basis = "index"
                    s.__dict__.pop("_stats", None)
        st.hf_pending = []

    # -- anything with key: value pairs and a step ------------------------------------------
    def _generic(self, line: str, n: int, st: _State) -> None:
        log = self.log
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
                tm = re.match(r"/(\d{1,15})", tail)
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
            step = float(em.group("ep") or em.group("ep2"))
            basis = "epoch"
            log.facts["planned_epochs"] = int(em.group("tot") or em.group("tot2"))
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

    def _point(self, key: str, raw: str, line: int, step: float, locator: Locator,
               role: Role | None = None, basis: str = "step") -> Series | None:
        try:
            value = parse_number(raw)
        except ValueError:
            return None
        memo = self._series_memo()
        s = memo.get((key, role))
        if s is None:
            default = classify(key)
            if role is not None:
                default = Classified(role, default.aggregation, False)
            s = memo[(key, role)] = self.series(key, default, locator=locator, step_basis=basis)
        s.append(step, value, line)
        if basis != "epoch":
            self.log.facts["last_step"] = step
        return s

    def _series_memo(self) -> dict[str | tuple[str, Role | None], Series]:
        """The series `series` gives for a key (an HF dict's, by the key alone: its role is the default) or a (key,
        role hint), without computing `classify`, the cache key and the locator again at each point. `series` takes
        the locator and basis only when it makes the series, and `classify` is a function of the key, so the one it
        gives for a key is always the same until `forget_series` drops its cache, and this memo with it."""
        memo = self.__dict__.get("_memo_by_key")
        if memo is None:
            memo = self.__dict__["_memo_by_key"] = {}
        return memo

    def forget_series(self) -> None:
        super().forget_series()
        self.__dict__.pop("_memo_by_key", None)
        self.__dict__.pop("_series_by_keys_memo", None)
        self.__dict__.pop("_hf_appends_memo", None)


def _plain_bar(line: str) -> tuple[int, int] | None:
    """The compiled `plain_bar`'s twin: (n, total) of a bar `_TQDM` reads after a description of spaces, its bracket
    holding fewer than two ``, `` (`_tqdm` then reads no postfix: the position is all it takes), else None."""
    m = _PLAIN_BAR.match(line)
    if m is None or m.group(3).count(", ") > 1:
        return None
    return int(m.group(1)), int(m.group(2))


def _hf_parsed(line: str) -> tuple[tuple[str, ...], tuple[float, ...], tuple[str, str, bool] | None, int]:
    """An HF dict's keys but ``epoch`` with their values (as float() reads them, else `parse_number`; a value neither
    reads is left out with its key), its first ``epoch`` pair or None, and its kind: 2 when a ``train_runtime`` key
    is anywhere (the closing summary: nothing else is read), 1 with an ``eval_`` key, else 0. The compiled `hf_dict`
    gives the same for the plain dicts `hf_pairs` reads (`parse_number`'s float() is its PyFloat_FromString)."""
    if CSTDOUT is not None:
        got = CSTDOUT.hf_dict(line)
        if got is not None:
            return got
    pairs = _HF_PAIR.findall(line)  # (key, value text, closing quote): the common dict without a match object a pair
    if pairs:
        keys = tuple(map(_FIRST, pairs))
        shape = _HF_SHAPES.get(keys) or _hf_shape(keys)
        if "train_runtime" in keys:
            return (), (), None, 2
        epoch: tuple[str, str, bool] | None = None
        if shape[0] is not None:  # `epoch` last and once: the shape of nearly every dict
            last = pairs.pop()
            epoch, keys = (last[0], last[1], last[2] == "'"), shape[0]
        elif "epoch" in keys:
            first = pairs[keys.index("epoch")]
            epoch = (first[0], first[1], first[2] == "'")
            pairs = [p for p in pairs if p[0] != "epoch"]
            keys = tuple(map(_FIRST, pairs))
        try:  # else one at a time below, leaving out what neither reads
            return keys, tuple(map(float, map(_SECOND, pairs))), epoch, shape[1]
        except ValueError:
            pass
    return _hf_parsed_pairs(line)


_HF_SHAPES: dict[tuple[str, ...], tuple[tuple[str, ...] | None, int]] = {}
# After each dict of a batch: a pair `_HF_PAIR` matches, with a key no line holds (the feed drops NUL characters),
# so the matches of the joined lines say where each line's end; no match crosses a line break.
_HF_END = "\n'\x00': 0}\n"


# (keys but ``epoch``, kind, each key's values, each dict's ``epoch`` text, and whether it was quoted)
_Columns = tuple[tuple[str, ...], int, list[list[float]], list[str], list[bool]]
# a set of keys' dicts in a batch: their places in it, and their `_hf_columns`
_Group = tuple[list[int], tuple[str, ...], int, list[list[float]], list[str], list[bool]]


def _first_key(line: str) -> str:
    """A dict up to the quote closing its first key (the whole dict without one)."""
    return line[:line.find("'", 2) + 1] or line


def _hf_groups(lines: list[str]) -> list[_Group] | None:
    """The dicts of a batch by their first key, each set read as columns (`_hf_columns`), in the order of their first
    dicts; None when a set does not read so, or two sets share a key. The first line's first key is looked for at
    each line's start by one `map` (a train dict's, most of a batch's)."""
    first = _first_key(lines[0])
    starts = list(map(str.startswith, lines, repeat(first)))
    places: dict[str, list[int]] = {first: list(compress(range(len(lines)), starts))}
    if len(places[first]) < len(lines):
        for i in compress(range(len(lines)), map(not_, starts)):
            places.setdefault(_first_key(lines[i]), []).append(i)
    groups = []
    for idx in sorted(places.values(), key=_FIRST):
        got = _hf_columns(list(map(lines.__getitem__, idx)) if len(idx) < len(lines) else lines)
        if got is None:
            return None
        groups.append((idx, *got))
    if len(groups) > 1 and len({key for g in groups for key in g[1]}) < sum(len(g[1]) for g in groups):
        return None  # a key in two sets: its series' points would not be in the dicts' order
    return groups


def _hf_columns(lines: list[str]) -> _Columns | None:
    """`_hf_parsed` of dicts with the same keys, ``epoch`` last and once, each value read by float(): (the keys but
    ``epoch``, their kind, each key's values in the lines' order, each line's ``epoch`` pair), by one `findall` over
    the lines joined; None when a line has other keys (or in another order), a value float() refuses, or the keys
    are not that shape (the closing summary)."""
    quoted = _hf_quoted_columns(lines)
    if quoted is not None:
        return quoted
    first = _HF_PAIR.findall(lines[0])
    keys = tuple(map(_FIRST, first))
    if not keys:
        return None
    shape = _HF_SHAPES.get(keys) or _hf_shape(keys)
    if shape[0] is None:
        return None
    pairs = _HF_PAIR.findall(_HF_END.join(lines) + _HF_END)
    k = len(keys) + 1  # a line's pairs and its end's
    if len(pairs) != k * len(lines) or list(map(_FIRST, pairs)) != [*keys, "\x00"] * len(lines):
        return None
    try:
        columns = [list(map(float, map(_SECOND, pairs[j::k]))) for j in range(k - 2)]
    except ValueError:
        return None
    ends = pairs[k - 2::k]
    return shape[0], shape[1], columns, list(map(_SECOND, ends)), [e[2] == "'" for e in ends]


# The characters of a number float() reads that `NUMBER_RE` reads whole too (no blank, "_", word or non-ASCII digit).
_NUMBER_BYTES = b"0123456789.eE+-"


@lru_cache(maxsize=256)
def _hf_skeleton(keys: tuple[str, ...]) -> str:
    """A 5.x dict of these keys as HF writes it, its values left out."""
    return "{" + ", ".join(f"'{key}': ''" for key in keys) + "}"


def _hf_quoted_columns(lines: list[str]) -> _Columns | None:
    """`_hf_columns` of 5.x dicts as HF writes them: each line ``{'key': 'value', …, 'epoch': 'value'}`` and
    nothing else, with the first line's keys, each value of digits, ".", "e", "E" and signs that float() reads (so
    `NUMBER_RE` reads it whole). Then a line's `_HF_PAIR` matches are its pairs, in order (a match starts at a quote
    before a key; the quotes after "': " and before ", " are a value's), and one `str.split` at the quotes of the
    lines joined gives them: the `findall` over them took 2.2 µs a dict of a 100 MB HF stdout. None for any other
    line, which `_hf_columns` reads by `findall`."""
    first = lines[0]
    k = first.count("'")
    if not k or k % 4 or first[:2] != "{'" or first[-2:] != "'}":
        return None
    k //= 4  # pairs a line, ``epoch`` the last
    parts = "\n".join(lines).split("'")
    count = len(lines)
    if len(parts) != 4 * k * count + 1:
        return None
    keys = tuple(parts[1:4 * k:4])
    values = parts[3::4]
    try:  # ASCII, and nothing but digits, ".", "e", "E" and signs
        if "".join(values).encode("ascii").translate(None, _NUMBER_BYTES):
            return None
    except UnicodeEncodeError:
        return None
    # the parts but the values, as the lines' shape leaves them: one comparison of the parts joined again (the
    # split is undone by the join, as no part holds a quote)
    parts[3::4] = repeat("", len(values))
    if "'".join(parts) != "\n".join(repeat(_hf_skeleton(keys), count)) or max(map(len, keys)) > 80 or not all(keys):
        return None
    shape = _HF_SHAPES.get(keys) or _hf_shape(keys)
    if shape[0] is None:
        return None  # ``epoch`` not last or not once, the closing summary
    try:  # a line's values are k in a row: each key's every k-th
        columns = [list(map(float, values[j::k])) for j in range(k - 1)]
        epochs = values[k - 1::k]
        _drain(map(float, epochs))
    except ValueError:
        return None
    return shape[0], shape[1], columns, epochs, [True] * count


def _hf_shape(keys: tuple[str, ...]) -> tuple[tuple[str, ...] | None, int]:
    """What `_hf_parsed` reads from the keys of a dict's `_HF_PAIR` pairs alone, kept by the keys (HF prints the same
    keys at each log call): the keys but ``epoch`` when ``epoch`` is the last key and the only one, no key is
    ``train_runtime`` (else None: the general reading), and the kind an ``eval_`` key makes (the line then holds
    ``'eval_``, as a key follows a quote)."""
    if len(_HF_SHAPES) >= 4096:  # random or damaged dicts: their sets of keys are not kept without bound
        _HF_SHAPES.clear()
    plain = keys[-1] == "epoch" and keys.count("epoch") == 1 and "train_runtime" not in keys
    shape = _HF_SHAPES[keys] = (keys[:-1] if plain else None, 1 if any(k.startswith("eval_") for k in keys) else 0)
    return shape


def _hf_parsed_pairs(line: str) -> tuple[tuple[str, ...], tuple[float, ...], tuple[str, str, bool] | None, int]:
    """`_hf_parsed` a pair at a time: a dict `_HF_PAIR` does not read (``_PAIR``'s pairs then), or with a value
    float() does not read."""
    keys: list[str] = []
    values: list[float] = []
    epoch: tuple[str, str, bool] | None = None
    kind = 0
    for p in _hf_pairs(line):
        key, raw = p[0], p[1]
        if key == "epoch":
            if epoch is None:
                epoch = p
            continue
        if key == "train_runtime":
            return (), (), None, 2
        if key.startswith("eval_"):
            kind = 1
        try:
            value = parse_number(raw)  # float() first, as hf_dict's values are
        except ValueError:
            continue
        keys.append(key)
        values.append(value)
    return tuple(keys), tuple(values), epoch, kind


def _hf_pairs(line: str) -> list[tuple[str, str, bool]]:
    """An HF dict's pairs as (key, value text, whether the match ends with a quote: 5.x's quoted values), by
    `_HF_PAIR` or, finding none, `_PAIR`. With the compiled pass, only the lines `hf_dict` declines come here, and
    `hf_pairs` (the same span finder: tests/test_compiled_text.py holds it to these matches) declines them too."""
    ms = list(_HF_PAIR.finditer(line)) or list(_PAIR.finditer(line))
    return [(m.group("key"), m.group("v"), m.group(0).endswith("'")) for m in ms]


@lru_cache(maxsize=256)
def _bar_desc(desc: str) -> tuple[bool, int | None, int | None]:
    if _EVAL_DESC.search(desc):
        return True, None, None
    em = _EPOCH_DESC.search(desc)
    if em is None:
        return False, None, None
    return False, int(em.group("ep")), int(em.group("tot")) if em.group("tot") else None


@lru_cache(maxsize=1024)
def postfix_locator(key: str) -> Locator:
    return Locator.compile(r"(?:\[|, )" + re.escape(key) + r"=(?P<v>" + _NUM + r")")


def looks_like(head: str) -> bool:
    """Some line carries a step and a loss-like value."""
    lines = head.splitlines()
    for raw in lines[:20000]:
        line = clean(raw)
        if (_BUILD.match(line) or _LLMC_STEP.match(line) or _HF_DICT.match(line) or _LLMC_SHORT.match(line)
                or _NANO_ITER.match(line) or _NANO_EVAL.match(line) or _MEGATRON.match(line)
                or ("loss" in line.lower() and _WORDS_STEP.match(line)) or _TORCHTUNE.match(line)):
            return True
        low = line.lower()
        if ("loss" in low and (_PAIR.search(line) or _EPOCH.search(line))
                and any(k in low for k in ("step", "iter", "epoch", "s:", "%|", "num_updates"))):
            return True
    return False


# Names trainers give their stdout: read as text even before the first step is logged.
_STDOUT_NAME = re.compile(r"^(train|training|log|main|output|out|stdout)\.(log|txt)$|^slurm-\d+\.out$")


def _sniff(p: Probe) -> Detection | None:
    """Last of the content sniffs: a step and a loss on some line of the head, then of up to 1 MB (long
    preambles hide logs), then a stdout file name."""
    if looks_like(p.head) or (len(p.raw) == HEAD_BYTES and looks_like(p.more())):
        return Detection("text", "lines with a step and a loss")
    if _STDOUT_NAME.match(p.name):
        return Detection("text", "a trainer stdout file name")
    return None


FORMAT = FormatSpec(
    "text", "stdout of a live run: HF Trainer, tqdm / Lightning bars, Keras, nanoGPT, llm.c, Megatron, …",
    open=line_format("text", TextStdoutReader), reader=TextStdoutReader,
    priority=90, sniff=_sniff, suffixes=(".txt", ".log", ".out"),
    globs=("**/*.log", "**/log.txt"), extras={"documents": ("**/*.txt",)},
    fuzz_seed="fixtures/logs/gpt2_train.11672114.log")
