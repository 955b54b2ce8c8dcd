"""The general text reader: the *shapes* training logs take, for the frameworks no specific reader knows.

A specific reader (``text_stdout``, ``csv_log``, ``jsonl``…) is better where it applies; this one reads what they
leave. Shapes, each seen in real framework output:

- **tables**: a header row of names, then numeric rows under it (fastai ``epoch train_loss valid_loss accuracy
  time``, skorch ``epoch train_loss valid_acc valid_loss dur`` under a ``-----`` rule, spaCy ``E # LOSS TOK2VEC
  …``, ``| epoch | loss |`` boxes). Cells are split on two or more blanks (so ``LOSS TOK2VEC`` is one name), on
  ``|``, or aligned under the header's columns. ANSI colours, ``\\r`` redraws between rows and non-numeric cells
  (``00:03``, ``#na#``) are tolerated.
- **boxes**: Stable-Baselines3's ``| rollout/ep_rew_mean | 21.3 |`` blocks between rules; the block's step is
  its ``total_timesteps``.
- **key-value runs**: ``name: v``, ``name=v``, ``name v``, ``name's metric: v``, separated by tabs, ``|``,
  `` - ``, commas or wide gaps, with a counter: ``[N]`` (XGBoost, LightGBM), ``iter N``, ``step N/M``,
  ``Epoch[e/E] Iteration[i/I]`` (Ignite). A line without a counter takes the last one printed (Keras
  ``verbose=2`` prints ``Epoch 3/10`` on its own line).
- **prefixes** are stripped first: timestamps, ``[rank0]:`` / ``[default1]:`` / ``node-2:`` (kept as the rank),
  logging levels and logger names (``INFO:root:``, ``2024-… - trainer - INFO -``), library tags
  (``[LightGBM] [Info]``).

The step is the finest counter on the line: a step or iteration over an epoch; epochs only when nothing finer is
printed; a within-epoch iteration (it starts again when the epoch moves on) is laid end to end. Each series says
where its steps came from (``step_basis``). Prose is not read: a ``name value`` pair without ``:`` or ``=`` counts
only when its piece of the line holds nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.fsio import open_regular
from ..core.lines import MAX_MATCH_LINE, split_lines
from ..core.model import NUMBER_RE, Event, EventKind, Locator, LogFile, Role, parse_number
from ..core.roles import Classified, RoleMap, classify_metric
from .base import FormatReader, line_format
from .registry import HEAD_BYTES, Detection, FormatSpec, Probe, spec

_NUM = r"(?:" + NUMBER_RE + r")"
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]{0,200}\x07|[\x08]")

# -- prefixes -----------------------------------------------------------------------------------------------
_RANK_PREFIX = re.compile(
    r"^\s{0,8}(?:\[(?:rank|Rank|RANK|default|node|Node)[ _-]?(?P<a>\d{1,5})\]:?|(?:rank|node)[_-]?(?P<b>\d{1,5}):)\s?")
_STAMP = re.compile(
    r"^\s{0,8}\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?|\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?)\]?"
    r"(?:\s{0,4}[-|:]\s)?\s{0,4}")
_GLOG = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9}\s{1,8}\d{1,9} [\w.-]{1,80}:\d{1,9}\] ?")
_LEVELS = r"(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|Info|Warning|Debug|Error|info|warning|debug|error)"
_LEVEL = re.compile(
    r"^(?:" + _LEVELS + r"(?::[\w.<>-]{1,80})?:\s?"            # INFO:root:  WARNING:__main__:
    r"|\[" + _LEVELS + r"\]\s?"                                   # [INFO]
    r"|(?:[\w.<>-]{1,80}\s{1,4}-\s{1,4})?" + _LEVELS + r"\s{1,4}[-|:]\s{1,4}(?:[\w.<>-]{1,80}\s{1,4}[-|:]\s)?"
    r"|[\w.<>-]{1,80}:\d{1,6}:?\s{1,4}-\s)"                       # loguru's module:func:12 -
)
_TAG = re.compile(r"^\[[A-Za-z][\w.-]{0,30}\]\s?(?=\S)")        # [LightGBM] [Info]
_SPLIT_WORDS = {"train", "training", "valid", "validation", "val", "eval", "evaluation", "test", "dev"}

# -- tokens of a key-value line -----------------------------------------------------------------------------
_SEG = re.compile(r"\t|\s*\|\s*| {2,}| - |,\s|;\s")
_TOK = re.compile(
    r"(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|Infinity|infinity)"
    r"(?![A-Za-z]))(?P<frac>/\d{1,15})?(?P<unit>[A-Za-z%\u00b5]{1,8}(?:/[A-Za-z]{1,8})?)?"
    r"|(?P<word>[A-Za-z_#][\w#'./-]{0,79})"
    r"|(?P<sep>\S)"
)
STEP_WORDS = {"step", "steps", "iter", "iters", "iteration", "iterations", "global_step", "globalstep", "num_updates",
              "update", "updates", "batch", "timestep", "timesteps", "total_timesteps", "round", "rounds",
              "n_iter", "niter", "it", "#", "gstep", "global_steps", "optimizer_step", "trainer_step"}
EPOCH_WORDS = {"epoch", "epochs", "ep"}
_TABLE_EPOCH = EPOCH_WORDS | {"e"}
# Measurement words: a piece of a line is a metric when its name holds one of these (a config dump's
# ``batch_size: 32`` is not, before a counter was printed).
METRIC_WORDS = {
    "loss", "losses", "acc", "accuracy", "err", "error", "logloss", "mlogloss", "rmse", "mse", "mae", "nll", "ppl",
    "perplexity", "f1", "f", "auc", "score", "reward", "rew", "return", "returns", "precision", "recall", "map",
    "bleu", "rouge", "iou", "dice", "lr", "grad", "norm", "gnorm", "kl", "entropy", "l1", "l2", "ce", "bpc",
    "wer", "cer", "top1", "top5", "r2", "ents", "uas", "las", "tag", "pos", "dur", "time", "fps", "logit",
}
_TIME_CELL = re.compile(r"^\d{1,4}:\d{2}(?::\d{2})?(?:\.\d+)?$")
_ABSENT_CELLS = {"#na#", "-", "--", "+", "*", "", "none", "None", "n/a", "N/A", "na"}
# a header cell: words, none of them a number ("LOSS TOK2VEC", "ENTS_F", "#", "valid_acc")
_HEADER_CELL = re.compile(r"^[A-Za-z_#%(][\w#%./()@-]{0,40}(?: [A-Za-z_#%(][\w#%./()@-]{0,40}){0,5}$")
_HAS_NUMBER_WORD = re.compile(r"(?:^|[\s|:=])[-+]?\.?\d")  # a header has names only
_RULE = re.compile(r"^[\s\-=+|:*~_\u2500-\u257f]{3,}$")
# The numbers of a line as _TOK finds them (a number not glued to a word): the line's template is the rest.
_NUMS = re.compile(r"(?<![\w#'./-])(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
                   r"|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|Infinity|infinity)(?![A-Za-z]))")
_LEAD_COUNTER = re.compile(r"^\[(?P<a>\d{1,3}(?:,\d{3}){1,4})\]\s|^(?P<b>\d{1,15}):(?=\s)")
# Running totals and bests a trainer prints beside its measurements (CatBoost's best/total/remaining).
_NOT_MEASURED = {"best", "total", "remaining", "eta", "elapsed", "left"}
# The same words the stdout reader watches for (text_stdout.py): the end of a run that did not end well.
_OVERFLOW = re.compile(r"OVERFLOW! Skipping step|Skipping step\. Attempted loss scale", re.I)
_KILLED = re.compile(r"CANCELLED AT|DUE TO TIME LIMIT|Killed|KeyboardInterrupt|out of memory", re.I)
_TIME_UNITS = {"ms", "s", "sec", "secs", "us"}
_RL_NAMES = frozenset({"reward", "rew", "timesteps", "episode", "rollout"})
_BEST_ITER = re.compile(r"best iteration is:?\s*$|^early stopping, best iteration", re.I)
_NAME_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def name_tokens(name: str) -> frozenset[str]:
    return frozenset(_NAME_TOKEN.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()))


def is_metric_name(name: str) -> bool:
    return bool(name_tokens(name) & METRIC_WORDS)


def counter_kind(key: str) -> str | None:
    """``step`` for an iteration counter, ``epoch`` for an epoch counter, else None (from the key's last word)."""
    last = key.rsplit(" ", 1)[-1].lower().strip("'\":[]")
    if last in STEP_WORDS:
        return "step"
    if last in EPOCH_WORDS:
        return "epoch"
    return None


def clean(line: str) -> str:
    return _CONTROL.sub("", line) if ("\x1b" in line or "\x08" in line) else line


def strip_prefix(line: str) -> tuple[str, int | None]:
    """The line without timestamps, rank labels, levels, logger names and library tags; and the rank it named."""
    rank = None
    for _ in range(8):
        if not line:
            break
        c = line.lstrip()[:1]
        m = None
        if c == "[" or c in "rnRN":
            m = _RANK_PREFIX.match(line)
            if m:
                rank = int(m.group("a") or m.group("b"))
                line = line[m.end():]
                continue
        if c.isdigit() or c == "[":
            m = _STAMP.match(line)
            if m and m.end() > 0 and (m.end() >= len(line) or not line[m.end() - 1].isdigit()):
                line = line[m.end():]
                continue
        if c in "IWEF":
            m = _GLOG.match(line)
            if m:
                line = line[m.end():]
                continue
        if c.isalpha() or c == "[":
            m = _LEVEL.match(line)
            if m and m.end() > 0:
                line = line[m.end():]
                continue
        if c == "[":
            m = _TAG.match(line)
            if m and line[1:m.end()].split("]")[0].lower() not in _SPLIT_WORDS:
                line = line[m.end():]
                continue
        break
    return line, rank


# -- one key-value line -------------------------------------------------------------------------------------
@dataclass(slots=True)
class Pair:
    key: str
    raw: str
    frac: int | None
    delimited: bool  # written with ':' or '=' (or a bracket): not prose
    at: int = -1     # where its number starts in the line


@dataclass(slots=True)
class Parsed:
    pairs: list[Pair]
    bracket: int | None = None     # [N] at the start of the line (XGBoost, LightGBM)
    progress: tuple[int, int] | None = None  # a bare n/N (a progress counter)
    context: str | None = None     # "Validation" of "Validation Results - Epoch: 3 …"


def parse_pairs(body: str, strict: bool = True) -> Parsed:
    """The pairs and counters of a line. ``strict``: prose is not read (a ``name value`` pair without ``:``/``=`` counts
    only in a piece of the line that holds nothing else); not strict, to find lines that merely look like metrics."""
    out = Parsed([])
    pos = 0
    first_seg = True
    words: list[str] = []
    delim = False
    for seg_m in _iter_segments(body):
        seg, base = body[pos:seg_m], pos
        pos = seg_m
        if not seg.strip():
            continue  # a gap of blanks or a tab: "step     0/99999" keeps its key across it
        bracket = False
        last_num: tuple[str, Pair | None, int] | None = None  # the number just read, for a unit word after it
        seg_pairs: list[Pair] = []
        leftover = junk = False
        for t in _TOK.finditer(seg):
            kind = t.lastgroup
            if kind == "word":
                w = t.group("word")
                if not words and w in _TIME_UNITS and last_num is not None:
                    # "(48.14 ms | data 0.82 ms)": a unit after a number names it (llm.c-style timings)
                    if last_num[1] is None:
                        seg_pairs.append(Pair(w, last_num[0], None, True, last_num[2]))
                    else:
                        last_num[1].key = f"{last_num[1].key} {w}"
                    last_num = None
                    continue
                if delim and words:  # "loss: x" ended the key: a new word starts a new key
                    words, delim = [], False
                words.append(w)
                leftover = True
                last_num = None
                continue
            if kind == "sep":
                ch = t.group("sep")
                if ch in ":=":
                    delim = True
                elif ch == "[":
                    bracket = True
                elif ch not in "]()'\"":
                    junk = junk or bool(words)  # words dropped by a stray mark: prose ("to /tmp/x")
                    words, delim = [], False
                continue
            # a number (the groups num/frac/unit)
            raw = t.group("num")
            frac = t.group("frac")
            unit = t.group("unit")
            if words:
                key = " ".join(words[-3:]).strip("'\"")  # LightGBM's "training's binary_logloss" keeps its owner
                marked = delim or bracket
                if not marked and len(words) > 3:
                    junk = True  # "Saving model to the folder at step 3": prose ending in a number
                pair = Pair(key, raw, int(frac[1:]) if frac else None, marked, base + t.start())
                seg_pairs.append(pair)
                words, delim, leftover = [], False, False
                last_num = (raw, pair, base + t.start()) if unit is None and frac is None else None
            elif bracket and first_seg and not out.pairs and not seg_pairs and frac is None and _is_count(raw):
                out.bracket = int(raw)
            elif frac and first_seg and not out.pairs and not seg_pairs and _is_count(raw) and unit is None:
                out.progress = (int(raw), int(frac[1:]))
            else:
                leftover = leftover or unit is None
                if unit is None and frac is None:
                    last_num = (raw, None, base + t.start())
            bracket = False
        if seg_pairs:
            if (leftover or junk) and strict:  # prose: "Epoch 3 took 12.5 seconds" keeps only what ':' or '=' delimited
                seg_pairs = [p for p in seg_pairs if p.delimited]
            out.pairs.extend(seg_pairs)
        elif first_seg and words and out.context is None:
            ctx = next((w for w in words if w.lower() in _SPLIT_WORDS), None)
            if ctx is not None:
                out.context = ctx
        first_seg = False
    return out


def _iter_segments(body: str):  # type: ignore[no-untyped-def]
    for m in _SEG.finditer(body):
        yield m.start()
        yield m.end()
    yield len(body)


# -- tables -------------------------------------------------------------------------------------------------
@dataclass
class _Table:
    names: list[str]
    spans: list[tuple[int, int]]
    pipe: bool
    step_col: int | None
    basis: str
    rows: int = 0
    measured: list[bool] = field(default_factory=list)  # per column: a measurement (not a counter)


def _cells(line: str, pipe: bool) -> list[tuple[int, int, str]]:
    """(start, end, text) of each cell."""
    out: list[tuple[int, int, str]] = []
    if pipe:
        pos = 0
        for part in line.split("|"):
            st = part.strip()
            out.append((pos, pos + len(part), st))
            pos += len(part) + 1
        if out and out[0][2] == "" and line.lstrip().startswith("|"):
            out.pop(0)
        if out and out[-1][2] == "" and line.rstrip().endswith("|"):
            out.pop()
        return out
    for m in re.finditer(r"\S+(?: \S+)*", line):
        out.append((m.start(), m.end(), m.group(0)))
    return out


def _words_of(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\S+", line)]


def header_of(line: str) -> _Table | None:
    """A header row: two or more names, at least one a metric or a counter, none a number."""
    if len(line) > 2000:
        return None
    pipe = line.count("|") >= 2
    cells = _cells(line, pipe)
    if len(cells) < 2 or len(cells) > 64:
        return None
    names = [c[2] for c in cells]
    if not all(_HEADER_CELL.match(n) for n in names):
        return None
    if not any(is_metric_name(n) for n in names):
        return None
    step_col = epoch_col = None
    for i, n in enumerate(names):
        low = n.lower()
        if low in STEP_WORDS and step_col is None:
            step_col = i
        elif low in _TABLE_EPOCH and epoch_col is None:
            epoch_col = i
    col, basis = (step_col, "step") if step_col is not None else (epoch_col, "epoch") if epoch_col is not None \
        else (None, "row")
    measured = [i != col and counter_kind(n.lower()) is None and n.lower() not in _TABLE_EPOCH
                for i, n in enumerate(names)]
    return _Table(names, [(c[0], c[1]) for c in cells], pipe, col, basis, 0, measured)


def _cell_value(text: str) -> float | str | None:
    """A number, None for a cell that holds no value (``#na#``, a time ``00:03``), "bad" for a word."""
    t = text.strip().rstrip("s%*+") if text not in _ABSENT_CELLS else ""
    if not t or t in _ABSENT_CELLS or _TIME_CELL.match(text.strip()):
        return None
    try:
        return parse_number(t)
    except ValueError:
        return "bad"


def row_of(line: str, tab: _Table) -> list[tuple[int, float | None]] | None:
    """The row's values by column, or None when the line is not a row of this table."""
    if len(line) > 4000:
        return None
    if not tab.pipe:
        words = line.split()
        if len(words) == len(tab.names):  # the common case: one value under each name
            vals: list[tuple[int, float | None]] = []
            numeric = 0
            for i, w in enumerate(words):
                try:
                    v: float | str | None = float(w)
                except ValueError:
                    v = _cell_value(w)
                    if v == "bad":
                        return None
                if v is not None:
                    numeric += 1
                vals.append((i, v))  # type: ignore[arg-type]
            return vals if numeric >= max(1, (len(tab.names) + 1) // 2) else None
    cells = _cells(line, True) if tab.pipe else _words_of(line)
    if tab.pipe and len(cells) != len(tab.names):
        return None
    if not tab.pipe and len(cells) != len(tab.names):
        cells = _align(cells, tab.spans)
        if cells is None:
            return None
    out: list[tuple[int, float | None]] = []
    numeric = 0
    for i, c in enumerate(cells):
        if c is None:
            continue
        v = _cell_value(c[2])
        if v == "bad":
            return None
        if v is not None:
            numeric += 1
        out.append((i, v))  # type: ignore[arg-type]
    if numeric < max(1, (len(tab.names) + 1) // 2):
        return None
    return out


def _align(cells: list[tuple[int, int, str]], spans: list[tuple[int, int]]):  # type: ignore[no-untyped-def]
    """Cells placed under the header column they overlap (or the nearest one); None when two share one."""
    if len(cells) > len(spans):
        return None
    placed: list[tuple[int, int, str] | None] = [None] * len(spans)
    for c in cells:
        best, dist = None, 1 << 30
        for j, (a, b) in enumerate(spans):
            d = 0 if (c[0] < b and c[1] > a) else min(abs(c[0] - b), abs(a - c[1]))
            if d < dist:
                best, dist = j, d
        if best is None or placed[best] is not None or dist > 8:
            return None
        placed[best] = c
    return placed


# -- the reader ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Plan:
    step: tuple[tuple[int, int | None], ...]   # (number index, its /total) of each step counter
    epoch: tuple[int, int | None] | None
    metrics: tuple[tuple[str, int, Locator], ...]  # (series name, number index, locator)
    bracket: int | None
    any_metric: bool
    uncounted: bool
    raws: list[str]
    weights: bool = False  # scikit-learn's linear-model epoch line (Norm, NNZs, Bias): its Norm is the weights'


@dataclass
class _Counter:
    last_epoch: int | None = None
    last_iter: int | None = None
    first_epoch: int | None = None
    per_epoch: bool | None = None
    epoch_len: int = 0
    max_iter: int = 0
    min_iter: int | None = None


@dataclass
class _State:
    step: float | None = None
    basis: str = "step"
    counters: dict[int | None, _Counter] = field(default_factory=dict)
    table: _Table | None = None
    box: list[tuple[int, str, str]] = field(default_factory=list)  # (line, name, value) of an open SB3 block
    box_section: str = ""
    skip_next_counter: bool = False
    rl: bool = False
    steps_by_rank: dict[int | None, float] = field(default_factory=dict)
    index: int = 0  # lines read in file order while no counter was printed
    fine_step: dict[int | None, float] = field(default_factory=dict)  # the last step/iteration printed, per rank
    epoch_and_iteration: bool = False  # a line printed both (Ignite): the stdout reader would take the epoch
    weights: bool = False  # a line printed the weights' Norm, NNZs and Bias (scikit-learn's SGD models)


@lru_cache(maxsize=2048)
def key_locator(key: str) -> Locator:
    words = [re.escape(w) for w in key.split(" ")]
    if key.split(" ")[-1] in _TIME_UNITS:  # "48.14 ms", "data 0.82 ms": the unit after the value
        head = r"\s{1,8}".join(words[:-1]) + r"\s{1,8}" if len(words) > 1 else r"(?<![\w.])"
        return Locator.compile(head + r"(?P<v>" + _NUM + r")\s{0,8}" + words[-1] + r"\b")
    return Locator.compile(r"(?<![\w'])" + r"\s{1,8}".join(words) + r"['\"]?\s{0,8}[:=]?\s{0,8}['\"]?\[?(?P<v>"
                           + _NUM + r")")


VALUE_LOCATOR = Locator.compile(r"(?<![\w.\[])(?P<v>" + _NUM + r")(?![\w.])")


class GeneralTextReader(FormatReader):
    format = "general"

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        super().__init__(log, roles)
        self.state = _State()

    def scan(self, text: str, first_line: int) -> None:
        st: _State = self.state
        for offset, raw in enumerate(split_lines(text)):
            if raw:
                self._line(clean(raw[:MAX_MATCH_LINE]), first_line + offset, st)

    def finish(self) -> None:
        pass

    def _line(self, raw: str, n: int, st: _State) -> None:
        body, rank = strip_prefix(raw)
        stripped = body.strip()
        if not stripped:
            return
        if rank is not None:
            self.log.facts["ranks"] = max(int(self.log.facts.get("ranks", 0)), rank + 1)
        if ("Trace" in stripped or "OVERFLOW" in stripped or "kipping step" in stripped or "Kill" in stripped
                or "CANCELLED" in stripped or "TIME LIMIT" in stripped or "Interrupt" in stripped
                or "out of memory" in stripped) and self._event(stripped, n, st, rank):
            return
        # SB3 boxes: "| rollout/ep_rew_mean | 21.3 |" lines between rules
        if stripped[0] == "|" and stripped[-1] == "|" and stripped.count("|") == 3:
            self._box_line(stripped, n, st)
            return
        if _RULE.match(stripped):
            if st.box:
                self._close_box(st, rank)
            return
        if st.box:
            self._close_box(st, rank)
        if "%|" in stripped or stripped.endswith("it/s]"):
            return  # a progress bar's redraw: its position is never a printed step
        if st.table is not None and (stripped[0].isdigit() or stripped[0] in "|-+." or stripped[:3].lower()
                                     in ("nan", "inf")):
            row = row_of(body if not st.table.pipe else stripped, st.table)
            if row is not None:
                self._table_row(row, n, st, rank)
                return
        if (not stripped[0].isdigit() and ("  " in stripped or "|" in stripped or "\t" in stripped)
                and not _HAS_NUMBER_WORD.search(stripped)):
            tab = header_of(stripped)
            if tab is not None and not any(":" in c or "=" in c for c in tab.names):
                if not tab.pipe:  # spans as on the body (rows are split on the body too)
                    lead = len(body) - len(body.lstrip())
                    tab.spans = [(a + lead, b + lead) for a, b in tab.spans]
                st.table = tab
                return
        self._kv(stripped, n, st, rank)

    def _event(self, line: str, n: int, st: _State, rank: int | None) -> bool:
        """What the run-end and precision rules read: a traceback, a kill, a skipped (overflowed) step."""
        step = st.steps_by_rank.get(rank)
        who = f"rank {rank}: " if rank is not None else ""
        if line.startswith("Traceback (most recent call last):"):
            self.log.events.append(Event(EventKind.TRACEBACK, step, n, who + line))
            return True
        if _OVERFLOW.search(line):
            self.log.facts["skipped_steps"] = int(self.log.facts.get("skipped_steps", 0)) + 1
            self.log.events.append(Event(EventKind.SKIPPED_STEP, step, n, (who + line)[:200]))
            return True
        if step is not None and _KILLED.search(line):
            self.log.events.append(Event(EventKind.INTERRUPTED, step, n, (who + line)[:200]))
        return False

    # -- boxes ------------------------------------------------------------------------------------------
    def _box_line(self, line: str, n: int, st: _State) -> None:
        inner = line[1:-1]
        name, _, value = inner.partition("|")
        key, value = name.strip(), value.strip()
        if not key:
            return
        if not value:
            st.box_section = key.rstrip("/") + "/"
            return
        full = key if "/" in key or not st.box_section else st.box_section + key
        st.box.append((n, full, value))

    def _close_box(self, st: _State, rank: int | None) -> None:
        entries, st.box, st.box_section = st.box, [], ""
        names = {name for _, name, _ in entries}
        step = None
        basis = "step"
        for want in ("time/total_timesteps", "total_timesteps", "timesteps", "time/iterations", "iterations",
                     "global_step", "step"):
            for _, name, value in entries:
                if name == want or name.endswith("/" + want):
                    try:
                        step = parse_number(value)
                    except ValueError:
                        continue
                    break
            if step is not None:
                break
        if step is None:
            return  # a box without a counter is a configuration table (llm.c prints one), not a measurement
        if any("rollout/" in x or "ep_rew" in x or "timesteps" in x for x in names):
            st.rl = True
        for line, name, value in entries:
            if counter_kind(name.rsplit("/", 1)[-1]) is not None or name.endswith("time_elapsed"):
                continue
            self._point(name, value, line, step, basis, rank, key_locator_box(name.rsplit("/", 1)[-1]))

    # -- tables -----------------------------------------------------------------------------------------
    def _table_row(self, row: list[tuple[int, float | None]], n: int, st: _State, rank: int | None) -> None:
        tab = st.table
        assert tab is not None
        tab.rows += 1
        if tab.step_col is not None:
            v = next((v for i, v in row if i == tab.step_col), None)
            if v is None:
                return
            step = float(v)
        else:
            step = float(tab.rows)
        measured = tab.measured
        for i, v in row:
            if v is None or not measured[i]:
                continue
            self._value(tab.names[i], v, n, step, tab.basis, rank, VALUE_LOCATOR)

    # -- key-value lines --------------------------------------------------------------------------------
    def _kv(self, body: str, n: int, st: _State, rank: int | None) -> None:
        if "est " in body and _BEST_ITER.search(body):
            st.skip_next_counter = True  # LightGBM repeats the best iteration's line after this
            return
        lead = _LEAD_COUNTER.match(body) if body[0] in "[0123456789" else None
        text = body[lead.end():] if lead is not None else body  # River's "[1,000] LogLoss: 0.45", CatBoost's "12:"
        nums = _NUMS.findall(text)
        tpl = _NUMS.sub("\x00", text) if nums else text
        cache = self._templates
        plan = cache.get(tpl)
        if plan is None:
            plan, exact = self._plan(text)
            if exact:
                if len(cache) >= 4096:
                    cache.clear()
                cache[tpl] = plan
            else:
                nums = plan.raws
        if plan.bracket is not None and not nums[plan.bracket].isdigit():
            plan, _ = self._plan(text)  # the template's counter is a float on this line: parse it whole
            nums = plan.raws if plan.raws else nums
        bracket = (int((lead.group("a") or lead.group("b")).replace(",", "")) if lead is not None
                   else int(nums[plan.bracket]) if plan.bracket is not None else None)
        if not plan.metrics and bracket is None and plan.step is None and plan.epoch is None:
            return
        if st.skip_next_counter:
            st.skip_next_counter = False
            if bracket is not None:
                return
        step_raw = None
        step_frac = None
        for i, frac in plan.step:
            if step_raw is None or _num(nums[i]) > _num(step_raw):
                step_raw, step_frac = nums[i], frac
        ep_raw = nums[plan.epoch[0]] if plan.epoch is not None else None
        ep_frac = plan.epoch[1] if plan.epoch is not None else None
        step: float | None = None
        basis = "step"
        if step_raw is not None and _is_count(step_raw):
            step = self._global_step(st, rank, ep_raw, step_raw, step_frac)
            st.fine_step[rank] = step
            basis = "epoch+iteration" if st.counters.get(rank, _Counter()).per_epoch else "step"
        elif bracket is not None:
            step = float(bracket)
            st.fine_step[rank] = step
        elif ep_raw is not None and _is_count(ep_raw) and rank in st.fine_step:
            # epochs only when nothing finer is printed: Ignite's "Validation Results - Epoch: 1" comes after the
            # epoch's iterations and belongs to the last of them
            step = st.fine_step[rank]
        elif ep_raw is not None and _is_count(ep_raw):
            step, basis = float(ep_raw), "epoch"
            if ep_frac:
                self.log.facts["planned_epochs"] = ep_frac
        if step is not None and step_frac and basis == "step":
            self.log.facts["max_steps"] = step_frac
        if step is None:
            if not plan.any_metric:
                return
            prev = st.steps_by_rank.get(rank)
            if prev is None:
                if not st.steps_by_rank and plan.uncounted:
                    # no counter anywhere yet: lines of two or more delimited metrics, one a loss, in file order
                    st.index += 1
                    self._emit(plan, nums, n, float(st.index), "index", rank)
                return
            step, basis = prev, st.basis
        else:
            st.steps_by_rank[rank] = step
            st.basis = basis
            if not plan.metrics:
                return
        self._emit(plan, nums, n, step, basis, rank)

    def _emit(self, plan: _Plan, nums: list[str], n: int, step: float, basis: str, rank: int | None) -> None:
        if plan.weights:  # before the line's Norm is named: it comes first (`Norm: 2.28, NNZs: 10, Bias: …`)
            self.state.weights = True
        for name, i, locator in plan.metrics:
            self._point(name, nums[i], n, step, basis, rank, locator)

    def _plan(self, text: str) -> tuple[_Plan, bool]:
        """What a line of this template holds: which of its numbers are counters and which metrics (with their
        series names), so lines that differ only in their numbers are parsed once (a log repeats a handful of
        shapes millions of times). False when the two tokenizations disagree: then the plan carries the raws."""
        p = parse_pairs(text)
        spans = [m.start() for m in _NUMS.finditer(text)]
        index = {a: i for i, a in enumerate(spans)}
        exact = all(pr.at in index for pr in p.pairs)
        raws: list[str] = []

        def at(pr: Pair) -> int:
            if exact:
                return index[pr.at]
            raws.append(pr.raw)
            return len(raws) - 1

        steps: list[tuple[int, int | None]] = []
        epoch: tuple[int, int | None] | None = None
        metrics: list[tuple[str, int, Locator]] = []
        kept: list[Pair] = []
        for pr in p.pairs:
            if pr.key.lower() in _NOT_MEASURED:
                continue
            kind = counter_kind(pr.key)
            if kind == "step":
                steps.append((at(pr), pr.frac))
            elif kind == "epoch":
                if epoch is None:
                    epoch = (at(pr), pr.frac)
            else:
                kept.append(pr)
                key = pr.key
                name = f"{p.context}/{key}" if p.context and not (name_tokens(key) & _SPLIT_WORDS) else key
                metrics.append((name, at(pr), key_locator(key)))
        bracket = None
        if p.bracket is not None:
            if exact:
                bracket = next((i for i, a in enumerate(spans) if text[a:].startswith(str(p.bracket))), None)
                if bracket is None:
                    exact = False
            if not exact:
                raws.append(str(p.bracket))
                bracket = len(raws) - 1
        any_metric = any(is_metric_name(pr.key) for pr in kept)
        uncounted = (len(kept) >= 2 and all(pr.delimited for pr in kept) and any(
            classify_metric(pr.key).role in (Role.TRAIN_LOSS, Role.EVAL_LOSS) and not classify_metric(pr.key).component
            for pr in kept))
        weights = any(name == "NNZs" for name, _, _ in metrics)
        return _Plan(tuple(steps), epoch, tuple(metrics), bracket, any_metric, uncounted, raws, weights), exact

    @property
    def _names(self) -> dict[tuple[str, int | None, bool, bool], tuple[str, Classified]]:
        """(name, rank, RL log, weights log) -> (series name, role): pure, kept for the reader's life."""
        cache = self.__dict__.get("_name_cache")
        if cache is None:
            cache = self.__dict__["_name_cache"] = {}
        return cache

    @property
    def _templates(self) -> dict[str, _Plan]:
        cache = self.__dict__.get("_template_cache")
        if cache is None:
            cache = self.__dict__["_template_cache"] = {}
        return cache

    def _global_step(self, st: _State, rank: int | None, ep_raw: str | None, it_raw: str,
                     it_frac: int | None) -> float:
        """The iteration, laid end to end over epochs when it starts again each epoch (Ignite's
        ``Iteration[i/I]`` under ``Epoch[e/E]``, ``Epoch 2 Batch 50/100``)."""
        it = int(it_raw)
        if ep_raw is None or not _is_count(ep_raw):
            return float(it)
        ep = int(ep_raw)
        if it_frac:
            st.epoch_and_iteration = True
        c = st.counters.setdefault(rank, _Counter())
        if c.first_epoch is None:
            c.first_epoch = ep
        if c.per_epoch is None and c.last_epoch is not None and ep > c.last_epoch:
            c.per_epoch = c.last_iter is not None and it <= c.last_iter
            if c.per_epoch:
                c.epoch_len = it_frac or (c.max_iter + (1 if c.min_iter == 0 else 0))
        if c.per_epoch and it_frac:
            c.epoch_len = it_frac
        c.last_epoch, c.last_iter = ep, it
        c.max_iter = max(c.max_iter, it)
        c.min_iter = it if c.min_iter is None else min(c.min_iter, it)
        if c.per_epoch:
            return float((ep - c.first_epoch) * c.epoch_len + it)
        return float(it)

    # -- points -----------------------------------------------------------------------------------------
    def _point(self, name: str, raw: str, line: int, step: float, basis: str, rank: int | None,
               locator: Locator) -> None:
        try:
            value = float(raw)
        except ValueError:
            try:
                value = parse_number(raw)
            except ValueError:
                return
        self._value(name, value, line, step, basis, rank, locator)

    def _value(self, name: str, value: float, line: int, step: float, basis: str, rank: int | None,
               locator: Locator) -> None:
        st = self.state
        names = self._names
        got = names.get((name, rank, st.rl, st.weights))
        if got is None:
            if name_tokens(name) & _RL_NAMES:
                st.rl = True  # rewards, timesteps, rollouts: a reinforcement-learning log from here on
            got = names[(name, rank, st.rl, st.weights)] = (name if rank is None else f"rank{rank}/{name}",
                                                            classify_metric(name, rl=st.rl, weights=st.weights))
        s = self.series(got[0], got[1], locator=locator, step_basis=basis)
        if basis == "epoch+iteration" and s.step_basis == "step":
            s.step_basis = basis  # the iteration was seen to start again with the second epoch
        s.append(step, value, line)
        if basis not in ("epoch", "row", "index"):
            self.log.facts["last_step"] = step


@lru_cache(maxsize=1024)
def key_locator_box(key: str) -> Locator:
    return Locator.compile(r"\|\s{0,80}" + re.escape(key) + r"\s{0,80}\|\s{0,80}(?P<v>" + _NUM + r")")


def _num(raw: str) -> float:
    try:
        return parse_number(raw)
    except ValueError:
        return float("nan")


def _is_count(raw: str) -> bool:
    return raw.isdigit() and len(raw) <= 15


# -- detection ----------------------------------------------------------------------------------------------
def metric_line(line: str) -> bool:
    """The line carries a number under a metric name (``loss: 0.5``, ``train-logloss:0.48``, a table row aside)."""
    body, _ = strip_prefix(clean(line[:4096]))
    if not body or len(body) > 4000:
        return False
    if not any(w in body.lower() for w in ("loss", "acc", "err", "rmse", "mse", "mae", "score", "rew", "f1", "auc",
                                           "ppl", "perplex", "nll", "return", "lr")):
        return False
    p = parse_pairs(body, strict=False)
    return any(is_metric_name(pr.key) and counter_kind(pr.key) is None for pr in p.pairs)


def sniff(head: str) -> int:
    """How surely ``head`` is a log of the shapes this reader knows: 2 when a shape the specific readers misread
    is seen (rank-prefixed lines, a table header with rows under it, ``[N]``-counted pairs, SB3 boxes), 1 when
    some line carries a counter and metric pairs, 0 otherwise."""
    reader = GeneralTextReader(LogFile(path="", format="general"))
    lines = head.splitlines()[:5000]
    weak = False
    ranks: set[int] = set()
    for raw in lines:
        line = clean(raw[:4096])
        body, rank = strip_prefix(line)
        if rank is not None and metric_line(body):
            ranks.add(rank)
            if len(ranks) >= 2:  # torchrun's [rank0]: / [rank1]: (DeepSpeed's lone "[Rank 0] [deepspeed]" is not)
                return 2
    reader.scan("\n".join(x[:4096] for x in lines), 1)
    log = reader.log
    if any(len(s) for s in log.series.values()):
        tables = reader.state.table is not None and reader.state.table.rows > 0
        if tables or reader.state.rl or reader.state.epoch_and_iteration:
            return 2
        if any(_bracketed(x) for x in lines[:2000]):
            return 2
        weak = True
    return 1 if weak else 0


_BRACKET_LINE = re.compile(r"^\s{0,4}\[\d{1,15}\]\t")


def _bracketed(line: str) -> bool:
    return bool(_BRACKET_LINE.match(line)) and metric_line(line)


def looks_like(head: str) -> bool:
    return sniff(head) > 0


def first_metric_line(path: str, limit: int = 1 << 20) -> tuple[int, str] | None:
    """The first line of ``path`` that looks like a metric line, for TL-FORMAT-UNKNOWN (None when none does)."""
    try:
        with open_regular(path) as f:
            text = f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None
    for i, line in enumerate(split_lines(text), 1):
        if metric_line(line):
            return i, line
    return None


# Structured files and source are never read as text lines: a JSON document's "step": 6 is no counter.
_NOT_GENERAL = {".json", ".jsonl", ".csv", ".tsv", ".yaml", ".yml", ".toml", ".py", ".md", ".rst", ".ipynb", ".html"}


def _reads(fmt: str, head: str) -> int:
    """2 when the reader of ``fmt`` reads a loss from ``head``, 1 another series, 0 nothing: the specific reader
    is kept where it reads as much as the general one."""
    log = LogFile(path="", format=fmt)
    reader_cls = spec(fmt).reader
    assert reader_cls is not None
    reader = reader_cls(log)
    reader.scan(head[: head.rfind("\n") + 1] or head, 1)
    reader.finish()
    if log.by_role(Role.TRAIN_LOSS) or log.by_role(Role.EVAL_LOSS):
        return 2
    return 1 if any(len(s) for s in log.series.values()) else 0


def _sniff(p: Probe) -> Detection | None:
    """Just before the stdout reader's sniff: first where the general reader reads a shape the stdout reader
    misreads (rank prefixes, tables, `[N]`-counted pairs, boxes), after it where it only sees a counter and
    metric pairs; and, on a long preamble, after the stdout reader's look at the first megabyte."""
    if p.suffix in _NOT_GENERAL:
        return None
    from . import text_stdout  # start-up: the stdout reader's patterns, only for a file no other format claimed

    head = p.head
    general = sniff(head)
    if general == 2:
        return Detection("general", "a table, box or counted metric lines (general text reader)")
    if text_stdout.looks_like(head):
        if general and _reads("text", head) < _reads("general", head):
            return Detection("general", "metric lines the stdout reader reads no loss of (general text reader)")
        return None  # the stdout reader's
    if general:
        return Detection("general", "lines with a counter and metric values (general text reader)")
    if len(p.raw) == HEAD_BYTES and not text_stdout.looks_like(p.more()) and sniff(p.more()):
        return Detection("general", "lines with a counter and metric values (general text reader)")
    return None


FORMAT = FormatSpec(
    "general", "any text log by its shapes: tables, key-value runs with a counter, rank prefixes (issue 24)",
    open=line_format("general", GeneralTextReader), reader=GeneralTextReader, priority=85, sniff=_sniff,
    suffixes=(".txt", ".log", ".out"), globs=("**/*.log", "**/*.txt"),
    fuzz_seed="fixtures/live/skorch-diverge/train.log")  # a table with ANSI colours
