"""TP-ZERO-LR and TP-ZERO-LR-PARTIAL: learning rates at or below zero; TL-LR-WARMUP: a warm-up the run never
finished; TL-LR-RESUME: a schedule that started over at a resume."""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

from ..core.model import Role, Series
from ..core.values import fmt_step
from .base import (
    CheckResult,
    Context,
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
    is_live,
    live_why,
    per_series,
)
from .registry import check
from .stats import stats

if TYPE_CHECKING:
    from collections.abc import Sequence

TP_ZERO_LR = Rule("TP-ZERO-LR", Level.FAIL, "lr", "The learning rate is zero (or negative) throughout")
TP_ZERO_LR_PARTIAL = Rule("TP-ZERO-LR-PARTIAL", Level.WARN, "lr", "The learning rate is zero for a large share")
TL_LR_RESUME = Rule("TL-LR-RESUME", Level.WARN, "lr-resume",
                    "The run resumed with a learning rate far from the one it had at that step")
TL_LR_WARMUP = Rule("TL-LR-WARMUP", Level.WARN, "lr-warmup",
                    "The run ended while its learning rate was still warming up")


@check("lr", TP_ZERO_LR, TP_ZERO_LR_PARTIAL, order=110, description="share of learning rates <= 0",
       thresholds={"TP-ZERO-LR": ("zero_lr_fail_fraction",), "TP-ZERO-LR-PARTIAL": ("max_zero_lr_fraction",)})
def check_lr(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def zero_learning_rates(s: Series) -> SkipReason | None:
        st = stats(s)
        numeric = len(s) - sum(1 for i in st.nonfinite if math.isnan(s.values[i]))
        if not numeric:
            return SkipReason(Skip.DEGENERATE, "every logged learning rate is NaN")
        nonpos, negative = st.nonpos, st.negative
        share = len(nonpos) / numeric
        values = {"series": s.label, "percent": Ratio(100 * share), "count": len(nonpos), "points": numeric,
                  "negative": negative}
        res.measurements.append(Measurement("lr", s.label, values, f"{100 * share:.3g}% <= 0"))
        if share >= th.zero_lr_fail_fraction:
            rule, message = TP_ZERO_LR, ("The learning rate is zero at (nearly) every logged step: the optimizer "
                                         "does not move the weights, so whatever the loss does is not learning.")
        elif share > th.max_zero_lr_fraction:
            rule, message = TP_ZERO_LR_PARTIAL, ("The learning rate is zero for a large share of the logged steps "
                                                 "(a long warm-up from zero, a schedule that ends early, or a "
                                                 "parameter group left at zero).")
        else:
            return None
        template = "{series}: {percent}% of logged values ({count} of {points}) are <= 0"
        if negative:
            template += " ({negative} of them negative, not zero)"
        first = nonpos[0]
        values["first_step"] = Step(s.steps[first])
        template += "; the first at step {first_step}"
        res.findings.append(Finding(rule.id, rule.level, message, Evidence(values, template), ctx.point(s, first),
                                    s.label, s.key, marks={first: "first-zero"}))
        return None

    return per_series(ctx, Role.LR, res, zero_learning_rates, "learning-rate")


@check("lr-warmup", TL_LR_WARMUP, order=120, description="a warm-up that lasted the whole run",
       thresholds=("min_points_for_trend", "running_if_written_within_s"))
def check_warmup(ctx: Context) -> CheckResult:
    """A stopped run whose learning rate rose at every logged point to its last one never reached its peak
    (HF ``warmup_steps`` longer than ``max_steps``). A live run is still warming up: it is not judged yet."""
    res = CheckResult()
    th = ctx.th

    def endless_warmup(s: Series) -> SkipReason | None:
        st = stats(s)
        vals = st.fin_vals
        if len(vals) < th.min_points_for_trend:
            return SkipReason(Skip.TOO_FEW, f"{len(vals)} finite learning rates, fewer than {th.min_points_for_trend}")
        if is_live(ctx):
            return SkipReason(Skip.TOO_EARLY, f"the run is still being written ({live_why(ctx)}): a rising "
                              "learning rate is its warm-up")
        planned = ctx.log.facts.get("max_steps")
        if isinstance(planned, int | float) and planned > 0 and s.steps[-1] < 0.95 * planned:
            return SkipReason(Skip.NOT_APPLICABLE, f"the log ends at step {s.steps[-1]:g} of {planned:g} planned: "
                              "the run went on (or stopped early), so its warm-up may have ended after")
        rising = st.fin_rising
        res.measurements.append(Measurement("lr-warmup", s.label, {"rising_to_the_end": rising},
                                            "rising at every point to the end" if rising else "not rising throughout"))
        if not rising or vals[0] <= 0:
            return None
        last = len(s) - 1
        values = {"series": s.label, "first": vals[0], "last": vals[-1], "points": len(vals),
                  "first_step": Step(s.steps[0]), "last_step": Step(s.steps[last])}
        template = ("{series}: rose at each of its {points} points, from {first} at step {first_step} to {last} "
                    "at step {last_step}, and the log ends there")
        if isinstance(planned, int | float) and planned > 0:
            values["planned"] = Step(planned)
            template += " (planned steps: {planned})"
        res.findings.append(Finding(
            TL_LR_WARMUP.id, TL_LR_WARMUP.level,
            "The learning rate was still rising when the run ended: a warm-up longer than the run (HF "
            "`warmup_steps` against `max_steps`, detectron2 `WARMUP_ITERS` against `MAX_ITER`) or a schedule that "
            "only increases. The run never trained at a settled rate, and any decay never happened.",
            Evidence(values, template), ctx.point(s, last), s.label, s.key, marks={last: "end", 0: "start"}))
        return None

    return per_series(ctx, Role.LR, res, endless_warmup, "learning-rate")


@check("lr-resume", TL_LR_RESUME, order=130, description="the learning rate a resumed run restarted with",
       thresholds=("lr_resume_jump",))
def check_lr_resume(ctx: Context) -> CheckResult:
    """A run resumed into the same log (its step counter went back, but not to the start): the learning rate it
    resumed with against the rate the earlier attempt had at that step, and when that is within the threshold, the
    farthest such pair over the steps both attempts logged. A scheduler whose state was not restored starts its
    schedule over (the warm-up or the peak again) while the step counter says the run is far along."""
    res = CheckResult()
    th = ctx.th

    def resumed_learning_rate(s: Series) -> SkipReason | None:
        st = stats(s)
        idx, vals = st.fin_idx, st.fin_vals
        seam = st.last_seam
        if not seam:
            return SkipReason(Skip.NOT_APPLICABLE, "the steps never go back: no resume in this log")
        i_after = idx[seam]
        step = s.steps[i_after]
        if step <= s.steps[idx[0]]:
            return SkipReason(Skip.NOT_APPLICABLE, f"the run after the seam starts at step {fmt_step(step)}, "
                              "where the first one did: a fresh run, not a resume")
        # the earlier attempt's rate at the resumed step: its last point at or before that step (found once a seam,
        # and the pairs after it walked from where the last judge stopped: `_Resume`)
        resume = st.memo.get("lr-resume")
        if not isinstance(resume, _Resume) or resume.seam != seam:
            resume = st.memo["lr-resume"] = _Resume(s, idx, seam, step)
        if resume.before is None:
            return SkipReason(Skip.NOT_APPLICABLE, "no learning rate of the earlier attempt at or before the "
                              "resumed step")
        j = resume.before
        was, now = vals[j], vals[seam]
        if was <= 0 or now <= 0:
            return SkipReason(Skip.DEGENERATE, "a learning rate at the seam is not positive")
        ratio = now / was
        values = {"series": s.label, "now": now, "step": Step(step), "was": was, "was_step": Step(s.steps[idx[j]]),
                  "ratio": Ratio(ratio), "threshold": Ratio(th.lr_resume_jump)}
        first_out = abs(math.log(ratio)) > math.log(th.lr_resume_jump)
        far = None if first_out else resume.farthest(s, idx, vals)
        res.measurements.append(Measurement(
            "lr-resume", s.label, {**values, **({"farthest": Ratio(far[2])} if far else {})},
            f"resumed at {ratio:.3g}x the rate the earlier attempt had at step {fmt_step(s.steps[idx[j]])}"
            + (f"; {far[2]:.3g}x at step {fmt_step(s.steps[idx[far[0]]])}" if far else "")))
        template = ("{series}: {now} at step {step} after the resume, {ratio}x the {was} the earlier attempt logged "
                    "at step {was_step} (threshold {threshold}x either way)")
        if not first_out:
            if far is None or abs(math.log(far[2])) <= math.log(th.lr_resume_jump):
                return None
            k, j = far[0], far[1]
            values.update(now=vals[k], step=Step(s.steps[idx[k]]), was=vals[j], was_step=Step(s.steps[idx[j]]),
                          ratio=Ratio(far[2]), resume_step=Step(step), first_ratio=Ratio(ratio))
            i_after = idx[k]
            template = ("{series}: {now} at step {step}, {ratio}x the {was} the earlier attempt logged at step "
                        "{was_step} (threshold {threshold}x either way); the resumed attempt's first rate, at step "
                        "{resume_step}, was {first_ratio}x")
        f = Finding(TL_LR_RESUME.id, TL_LR_RESUME.level,
                    "The run resumed at a step it had reached before, but with a learning rate far from the one it "
                    "had there: the scheduler's state (or the optimizer's) was probably not restored with the "
                    "weights, so the schedule started over. A warm-up or peak rate late in training can undo "
                    "progress.",
                    Evidence(values, template),
                    ctx.point(s, i_after), s.label, s.key, marks={i_after: "resume", idx[j]: "before"})
        f.related.append(Related("before", ctx.point(s, idx[j]), "the earlier attempt's rate at that step"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.LR, res, resumed_learning_rate, "learning-rate")


class _Resume:
    """The last seam's pairing, kept in the series' cache from one judge to the next: a re-judge after one appended
    point walked every point before the seam twice (a log resumed near its end: 40,010 points touched at 40,000
    records, 4,010 at 4,000). The points before a seam never change (a cut that reaches them drops the cache with
    the rest of the series' measurements), and those after it are only appended to."""

    __slots__ = ("before", "best", "done", "earlier", "k", "seam", "start")

    def __init__(self, s: Series, idx: Sequence[int], seam: int, step: float) -> None:
        steps = s.steps
        self.seam = seam
        #: finite position of the earlier attempt's last point at or before the resumed step, None when none is
        self.before = next((j for j in range(seam - 1, -1, -1) if steps[idx[j]] <= step), None)
        self.earlier: list[float] | None = None  # the steps of the attempt just before the seam (rising)
        self.start = self.k = seam
        self.best: tuple[int, int, float] | None = None
        self.done = False

    def farthest(self, s: Series, idx: Sequence[int], vals: Sequence[float]) -> tuple[int, int, float] | None:
        """The resumed attempt's point whose rate is farthest (either way) from the rate the attempt before it
        logged at or before the same step, over the steps both logged: (finite position after the seam, before it,
        ratio). A schedule that starts over meets the earlier rate's level at the first point only by chance: a
        warm-up begun again is below a decayed rate at first and climbs past it (population
        torch-resume-nosched-003: 0.617x at the resume, 3.3x thirty steps on). None when no positive pair
        overlaps. Walks the points appended since the last call only."""
        steps = s.steps
        if self.earlier is None:
            start = self.seam - 1
            while start > 0 and steps[idx[start - 1]] < steps[idx[start]]:
                start -= 1  # the attempt just before the seam: its steps rise
            self.start, self.earlier = start, [steps[idx[p]] for p in range(start, self.seam)]
        earlier, start, best = self.earlier, self.start, self.best
        k = self.k
        while not self.done and k < len(vals):
            if steps[idx[k]] > earlier[-1]:
                self.done = True  # past the earlier attempt's last step: no later point pairs
                break
            pos = bisect.bisect_right(earlier, steps[idx[k]]) - 1
            if pos >= 0 and vals[k] > 0 and vals[start + pos] > 0:
                r = vals[k] / vals[start + pos]
                if best is None or abs(math.log(r)) > abs(math.log(best[2])):
                    best = (k, start + pos, r)
            k += 1
        self.k, self.best = k, best
        return best
