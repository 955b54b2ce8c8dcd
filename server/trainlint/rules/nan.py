"""TP-NAN and TP-NAN-GRAD: non-finite losses and gradient norms.

A NaN in the log says the logged number was NaN. It does not say a NaN reached the weights:
when finite losses follow a non-finite gradient norm, a loss scaler most likely skipped that
step, and the messages say so instead of claiming corrupted weights.
"""

from __future__ import annotations

import math

from ..core.model import Aggregation, Role, Series
from ..core.roles import run_of, tokens
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
    rl_markers,
)
from .registry import check
from .stats import finite_from, points_from, stats

TP_NAN = Rule("TP-NAN", Level.FAIL, "non-finite-loss", "Loss is NaN or Inf")
TP_NAN_GRAD = Rule("TP-NAN-GRAD", Level.FAIL, "grad-finite", "Gradient norm is NaN or Inf")
MAX_RELATED = 5


def _bad(s: Series) -> list[int]:
    return stats(s).nonfinite


def _finite_after(s: Series, step: float) -> int:
    return finite_from(s, step, strictly=True)


def _relate_more(ctx: Context, f: Finding, s: Series, bad: list[int]) -> None:
    """The next few non-finite points, as related locations and sparkline marks."""
    for i in bad[1:MAX_RELATED + 1]:
        f.related.append(Related("non-finite", ctx.point(s, i), f"{s.values[i]} at step {s.steps[i]:g}"))
        f.marks[i] = "non-finite"


def rl_objectives(ctx: Context) -> list[Series]:
    """The losses of a reinforcement-learning run (``policy_loss``, SB3's ``train/value_loss``): read as other,
    because they follow the returns and no trend is expected of them; a NaN in one is still a NaN."""
    marks = rl_markers(ctx.log)
    return [s for s in ctx.log.series.values() if s.role == Role.OTHER and len(s) and run_of(s.name) in marks
            and {"loss", "losses"} & set(tokens(s.name))]


def _rise_before(ctx: Context, f: Finding, s: Series, first: int) -> None:
    """The rise of the finite values before the first non-finite one, when they are too few for TP-DIVERGE to
    judge a trend (``min_points_for_trend``): the NaN is the fault's one finding, and it shows where the loss
    started to rise (its lowest finite value before, a related location), when the last finite value ended more
    than ``max_loss_divergence_ratio`` above it."""
    th = ctx.th
    if stats(s).count_fin >= th.min_points_for_trend:  # first: TP-DIVERGE judges those, and this walks them
        return
    before = [i for i in range(first) if math.isfinite(s.values[i]) and s.values[i] > 0]
    if len(before) < 2:
        return
    lo = min(before, key=lambda i: s.values[i])
    last = before[-1]
    ratio = s.values[last] / s.values[lo]
    if lo == last or ratio <= th.max_loss_divergence_ratio:
        return
    f.evidence.values.update(rise_from=s.values[lo], rise_from_step=Step(s.steps[lo]), rise_to=s.values[last],
                             rise_to_step=Step(s.steps[last]), rise_ratio=Ratio(ratio),
                             rise_threshold=th.max_loss_divergence_ratio)
    f.evidence.template += ("; before it the loss rose {rise_ratio}x from its lowest {rise_from} at step "
                            "{rise_from_step} to {rise_to} at step {rise_to_step} (more than {rise_threshold}x)")
    f.related.append(Related("rise-from", ctx.point(s, lo), "lowest finite value before the first non-finite"))
    f.marks.setdefault(lo, "rise-from")


@check("non-finite-loss", TP_NAN, order=10, description="any NaN or Inf in a loss series",
       thresholds={"TP-NAN": ("max_loss_divergence_ratio", "min_points_for_trend")})
def check_nan(ctx: Context) -> CheckResult:
    res = CheckResult()
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    held, _ = ctx.judged(Role.EVAL_LOSS)
    rl = rl_objectives(ctx)
    if not train and not held and not rl:
        res.skipped = SkipReason(Skip.NO_SERIES, "no loss series in the log")
        return res
    for s in train + held + rl:
        res.coverage[s.label] = None
        bad = _bad(s)
        res.measurements.append(Measurement("non-finite-loss", s.label, {"non_finite": len(bad), "points": len(s)},
                                            f"{len(bad)} of {len(s)} values non-finite"))
        if not bad:
            continue
        first = bad[0]
        values = {"series": s.label, "count": len(bad), "points": len(s), "value": s.values[first],
                  "step": Step(s.steps[first])}
        template = "{series}: {count} of {points} logged values are non-finite; the first is {value} at step {step}"
        message = ("The logged loss is NaN or Inf from this point: the forward pass or the loss computation "
                   "produced a non-finite number. The log alone does not show whether it reached the weights.")
        if s.aggregation == Aggregation.RUNNING:
            step_series = ctx.log.series.get(s.key.replace(Aggregation.RUNNING.value, Aggregation.STEP.value))
            if step_series is not None and len(step_series) > first and math.isfinite(step_series.values[first]):
                values["logged_value"] = step_series.values[first]
                template += " while the value logged at that step is {logged_value}"
                message = ("The running average became non-finite while the value logged at the same step is "
                           "finite: some step between the logged ones produced a NaN or Inf loss that entered "
                           "the average. The logged per-step values alone would not show it.")
        after = _finite_after(s, s.steps[bad[-1]])
        if after:
            values["finite_after"] = after
            template += "; {finite_after} finite values follow the last non-finite one"
            message += " Finite values follow, so training did not stay non-finite."
        f = Finding(TP_NAN.id, TP_NAN.level, message, Evidence(values, template), ctx.point(s, first),
                    s.label, s.key, marks={first: "first-non-finite"})
        _rise_before(ctx, f, s, first)
        _relate_more(ctx, f, s, bad)
        res.findings.append(f)
    return res


@check("grad-finite", TP_NAN_GRAD, order=40, description="any NaN or Inf in a gradient-norm series",
       level_notes={"TP-NAN-GRAD": "or WARN when the loss stayed finite"})
def check_nan_grad(ctx: Context) -> CheckResult:
    res = CheckResult()
    grads, _ = ctx.judged(Role.GRAD_NORM)
    if not grads:
        res.skipped = SkipReason(Skip.NO_SERIES, "no gradient-norm series in the log")
        return res
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    loss = max(train, key=len) if train else None
    for s in grads:
        res.coverage[s.label] = None
        bad = _bad(s)
        res.measurements.append(Measurement("grad-finite", s.label, {"non_finite": len(bad), "points": len(s)},
                                            f"{len(bad)} of {len(s)} gradient norms non-finite"))
        if not bad:
            continue
        first = bad[0]
        values = {"series": s.label, "count": len(bad), "points": len(s), "value": s.values[first],
                  "step": Step(s.steps[first])}
        template = "{series}: {count} of {points} gradient norms are non-finite; the first is {value} at step {step}"
        level = Level.FAIL
        if loss is not None:
            x0 = s.steps[first]
            later = points_from(loss, x0)
            finite_later = finite_from(loss, x0)
            values.update(loss_series=loss.label, loss_after=later, loss_finite_after=finite_later)
            template += "; {loss_finite_after} of {loss_after} {loss_series} values from that step on are finite"
            held_bad = sum(points_from(h, x0) - finite_from(h, x0) for h in ctx.judged(Role.EVAL_LOSS)[0])
            if later and finite_later == later and not held_bad:
                # Level by evidence: a scaler-skipped overflow leaves the loss finite; that is worth a look,
                # not a failed run (trainproof FAILs it).
                level = Level.WARN
                message = ("The gradient norm overflowed while the loss stayed finite afterwards. This is "
                           "consistent with a loss scaler (fp16 GradScaler) detecting the overflow and skipping "
                           "those optimizer steps; the log does not show non-finite weights. Frequent overflows "
                           "still point at a learning rate or precision setting worth checking.")
            else:
                message = ("The gradient norm became non-finite and the loss is non-finite after it too: the "
                           "update may have corrupted the weights. Check the learning rate, precision and "
                           "gradient clipping.")
        else:
            message = ("The gradient norm was NaN or Inf at these steps. Without a loss series the log cannot "
                       "show whether the step was skipped by a loss scaler or applied.")
        f = Finding(TP_NAN_GRAD.id, level, message, Evidence(values, template), ctx.point(s, first),
                    s.label, s.key, marks={first: "first-non-finite"})
        _relate_more(ctx, f, s, bad)
        res.findings.append(f)
    return res
