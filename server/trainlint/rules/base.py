"""What a rule returns: findings with evidence apart from interpretation, and its coverage.

``Evidence.text`` is rendered from ``Evidence.values`` and nothing else, so every number a user
reads in it is a measured value (a test checks this for every rule). ``Finding.message`` is the
interpretation, worded as what the measurement may mean.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from ..model import Event, Location, LogFile, Role, Series
from ..output.values import fmt_step, fmt_value
from ..roles import is_adversarial, is_plain_loss, run_of
from .thresholds import Thresholds

if TYPE_CHECKING:
    from typing import Any


class Level(StrEnum):
    FAIL = "FAIL"
    WARN = "WARN"
    INFO = "INFO"
    NOT_CHECKED = "NOT-CHECKED"
    PASS = "PASS"


class Skip(StrEnum):
    NO_SERIES = "no-series"
    TOO_FEW = "too-few-points"
    DEGENERATE = "degenerate"
    NOT_APPLICABLE = "not-applicable"
    WAIVED = "waived"
    DISABLED = "disabled"
    UNREADABLE = "unreadable"
    TOO_EARLY = "too-early"
    TOO_LARGE = "too-large"


class Step(float):
    """A step number in evidence values: rendered as a step (``1200``), not as a measurement."""


class Ratio(float):
    """A ratio in evidence values: rendered with 3 significant digits (``1.17``)."""


def _fmt(v: Any) -> str:
    if isinstance(v, Step):
        return fmt_step(float(v))
    if isinstance(v, Ratio):
        if not math.isfinite(v):
            return fmt_value(float(v))
        if abs(v) >= 1e6:
            return f"{float(v):.3g}"
        return f"{float(v):.0f}" if abs(v) >= 1000 else f"{float(v):.3g}"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fmt_value(v)
    return str(v)


@dataclass
class Evidence:
    """The measurement. ``text`` is ``template`` filled from ``values`` only."""

    values: dict[str, Any]
    template: str

    @property
    def text(self) -> str:
        fields_ = {name for _, name, _, _ in string.Formatter().parse(self.template) if name}
        return self.template.format(**{k: _fmt(self.values[k]) for k in fields_})


@dataclass
class Related:
    role: str
    location: Location
    message: str


@dataclass
class Finding:
    id: str
    level: Level
    message: str
    evidence: Evidence
    location: Location
    series: str | None = None          # the label of the series judged
    series_key: str | None = None
    related: list[Related] = field(default_factory=list)
    marks: dict[int, str] = field(default_factory=dict)  # point index -> role, for sparklines


@dataclass
class SkipReason:
    reason: Skip
    detail: str


@dataclass
class Measurement:
    """What a check measured on one series, fired or not (shown for every judged series)."""

    check: str
    series: str
    values: dict[str, Any]
    text: str


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    # series label -> None when it ran, or the reason it was skipped on that series
    coverage: dict[str, SkipReason | None] = field(default_factory=dict)
    measurements: list[Measurement] = field(default_factory=list)
    skipped: SkipReason | None = None  # the whole check, when there was nothing to judge


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    check: str
    title: str


@dataclass
class Context:
    log: LogFile
    th: Thresholds
    facts: dict[str, Any] = field(default_factory=dict)  # run-level facts (issue: coverage of the log)

    def judged(self, role: Role, trend: bool = False) -> tuple[list[Series], list[tuple[Series, str]]]:
        """Series of a role a rule judges: the totals; components only when no total exists. Rules that judge a
        trend (``trend``) never judge adversarial losses, which rise and fall against each other by design."""
        all_ = self.log.by_role(role)
        if trend and role in (Role.TRAIN_LOSS, Role.EVAL_LOSS) and all_ and (marks := rl_markers(self.log)):
            # Direction (issue 30): in a reinforcement-learning run a "loss" is an objective term (PPO's total loss
            # follows its value loss as the returns grow), not a supervised loss expected to fall.
            rl = [(s, f"an RL objective, not a supervised loss (`{marks[run_of(s.name)][0].name}` is logged): no "
                      "trend is expected of it") for s in all_
                  if any(_same_file(s, m) for m in marks.get(run_of(s.name), []))]
            if rl:
                rest, skipped = self.judged(role)
                gone = {id(s) for s, _ in rl}
                return [s for s in rest if id(s) not in gone], skipped + [x for x in rl if x[0] in rest]
        if trend:
            adversarial = [s for s in all_ if is_adversarial(s.name)]
            if adversarial:
                rest, skipped = self.judged(role)
                keep = [s for s in rest if s not in adversarial]
                return keep, skipped + [(s, "an adversarial loss (GAN term or optimizer-indexed): no trend is "
                                            "expected of it") for s in adversarial if s in rest]
        primary = [s for s in all_ if not s.component]
        # train/base_loss beside train/loss is a term of it; train/box_loss alone (YOLO) is not.
        plain = [s for s in primary if is_plain_loss(s.name)]
        if plain and role in (Role.TRAIN_LOSS, Role.EVAL_LOSS):
            primary = plain
        if primary:
            return primary, [(s, "a term of a total that is judged") for s in all_ if s not in primary]
        return all_, []

    def point(self, s: Series, i: int) -> Location:
        return self.log.locate(s, i)


_RL_TOKENS = {"reward", "rewards", "rew", "return", "returns", "rollout"}


def rl_markers(log: LogFile) -> dict[str, list[Series]]:
    """Per run of the log (``roles.run_of``: one, unless a folder holds several), the name of a series that marks
    it as reinforcement learning (rewards, returns, rollouts). A minimal stand-in for the general reader's
    ``direction`` (a reward rises; an RL policy/value loss is no supervised loss), kept in the rules so it holds
    for every reader."""
    from ..roles import tokens

    out: dict[str, list[Series]] = {}
    for s in log.series.values():
        if s.role == Role.OTHER and len(s) and _RL_TOKENS & set(tokens(s.name)):
            out.setdefault(run_of(s.name), []).append(s)
    return out


def _same_file(a: Series, b: Series) -> bool:
    """Both series were read from one file (an event folder can hold unrelated runs' files)."""
    return not len(a.files) or not len(b.files) or a.files[0] == b.files[0]


def event_location(log: LogFile, e: Event) -> Location:
    """Where an event sits: its line (the whole line), or its record in an event file."""
    if e.record is not None:
        member = log.members[e.file] if log.members else log.path
        return Location(member, None, record=e.record, offset=e.offset)
    text = log.line_text(e.line) if e.line else None
    return Location(log.path, e.line, 1, e.line, (len(text) + 1) if text is not None else None)


def finite(s: Series) -> tuple[list[int], list[float]]:
    """Indices and values of the finite points (shared, incrementally kept: do not modify)."""
    from .stats import finite as cached

    return cached(s)


def too_few(n: int, need: int, what: str = "finite points", why: str = "") -> SkipReason | None:
    """The guard every rule starts with: below ``need`` points there is nothing to measure."""
    if n >= need:
        return None
    return SkipReason(Skip.TOO_FEW, f"{n} {what}, fewer than {need}" + (f"; {why}" if why else ""))


def is_live(ctx: Context) -> bool:
    """The run is still being written: the caller said so (``check --live``), or, where the caller measures it
    (``watch``, the server), its log changed within ``running_if_written_within_s``. ``check`` never asks the
    clock: the same bytes give the same verdict."""
    live = ctx.facts.get("live")
    if live is not None:
        return bool(live)
    age = ctx.facts.get("age_s")
    return age is not None and age < ctx.th.running_if_written_within_s


def live_why(ctx: Context) -> str:
    """How a live run is known to be live, for coverage reasons: its measured age, or the caller's word."""
    age = ctx.facts.get("age_s")
    if ctx.facts.get("live") is None and age is not None:
        return f"written {age:.0f} s ago"
    return "judged as live"


def too_early(ctx: Context, s: Series, n: int) -> SkipReason | None:
    """For rules that need progress: is this live run still too young to show it? Never for a stopped run."""
    th = ctx.th
    if not is_live(ctx):
        return None
    if n < th.live_min_points:
        return SkipReason(Skip.TOO_EARLY, f"{n} points while the run is still being written ({live_why(ctx)}); "
                          f"fewer than {th.live_min_points}")
    planned = ctx.log.facts.get("max_steps")
    last = s.steps[-1] if len(s) else None
    if isinstance(planned, int | float) and planned > 0 and last is not None and last < th.live_min_progress * planned:
        return SkipReason(Skip.TOO_EARLY, f"at step {fmt_step(last)} of {fmt_step(planned)} planned "
                          f"({100 * last / planned:.1f}%), under {100 * th.live_min_progress:.0f}%")
    from .stats import stats  # stats needs this module's medians

    for lr in ctx.log.by_role(Role.LR):
        st = stats(lr)
        vals = st.fin_vals
        if len(vals) >= 2 and vals[-1] > vals[-2] and vals[-1] >= st.fin_max:  # still rising at its last point
            return SkipReason(Skip.TOO_EARLY, f"the logged learning rate `{lr.name}` is still warming up "
                              f"({fmt_value(vals[0])} to {fmt_value(vals[-1])} at step {fmt_step(lr.steps[-1])})")
    return None


def upper_median(xs: Iterable[float]) -> float:
    """trainproof's median: sorted(x)[n // 2] (the upper median for even n)."""
    v = sorted(xs)
    return v[len(v) // 2]


def median(xs: Iterable[float]) -> float:
    v = sorted(xs)
    n = len(v)
    if n == 0:
        return math.nan
    mid = n // 2
    return v[mid] if n % 2 else (v[mid - 1] + v[mid]) / 2


CheckFn = Callable[[Context], CheckResult]


@dataclass(frozen=True)
class Check:
    name: str
    rules: tuple[Rule, ...]
    run: CheckFn
    description: str


def per_series(ctx: Context, role: Role, result: CheckResult,
               fn: Callable[[Series], SkipReason | None], what: str, trend: bool = False) -> CheckResult:
    """Run ``fn`` on every judged series of ``role``; record coverage per series."""
    judged, passed_over = ctx.judged(role, trend)
    for s, why in passed_over:
        if trend and why.startswith(("an adversarial", "an RL objective")):
            result.coverage[s.label] = SkipReason(Skip.NOT_APPLICABLE, why)
    if not judged:
        if result.coverage:
            result.skipped = SkipReason(Skip.NOT_APPLICABLE, "; ".join(
                f"{k}: {v.detail}" for k, v in result.coverage.items() if v))
            return result
        result.skipped = SkipReason(Skip.NO_SERIES, f"no {what} series in the log")
        return result
    for s in judged:
        result.coverage[s.label] = fn(s)
    if all(r is not None for r in result.coverage.values()):
        reasons = {r.reason for r in result.coverage.values() if r is not None}
        first = next(r for r in result.coverage.values() if r is not None)
        result.skipped = SkipReason(first.reason if len(reasons) == 1 else Skip.DEGENERATE,
                                    "; ".join(f"{k}: {v.detail}" for k, v in result.coverage.items() if v))
    return result
