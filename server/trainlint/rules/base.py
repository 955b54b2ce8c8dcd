"""What rules are made of: the judging context, the guards every rule starts with, and the per-series loop.

The result types (findings, evidence, coverage) live in ``core.findings``, because layers above the rules read
them; they are re-exported here so that a rule module imports its toolkit from one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.findings import (  # re-exported: what every rule module builds its results from
    CheckResult,
    Evidence,
    Finding,
    Level,
    Measurement,
    Ratio,
    Related,
    Rule,
    Skip,
    SkipReason,
    Step,
)
from ..core.model import Event, Location, LogFile, Role, Series
from ..core.roles import is_adversarial, is_plain_loss, run_of, tokens
from ..core.values import fmt_step, fmt_value
from .stats import finite as cached_finite
from .stats import median, stats, upper_median
from .thresholds import Thresholds

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CheckResult", "Context", "Evidence", "Finding", "Level", "Measurement", "Ratio",
           "Related", "Rule", "Skip", "SkipReason", "Step", "event_location", "finite", "is_live", "median",
           "per_series", "too_early", "too_few", "upper_median"]


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
    return cached_finite(s)


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
    for lr in ctx.log.by_role(Role.LR):
        st = stats(lr)
        vals = st.fin_vals
        if len(vals) >= 2 and vals[-1] > vals[-2] and vals[-1] >= st.fin_max:  # still rising at its last point
            return SkipReason(Skip.TOO_EARLY, f"the logged learning rate `{lr.name}` is still warming up "
                              f"({fmt_value(vals[0])} to {fmt_value(vals[-1])} at step {fmt_step(lr.steps[-1])})")
    return None


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
