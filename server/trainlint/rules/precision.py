"""TL-LOSS-SCALE and TL-SKIPPED-STEPS: what an fp16 run's dynamic loss scaler reports about itself.

Every dynamic scaler (PyTorch's GradScaler, DeepSpeed, Megatron, fairseq) halves its scale when the scaled
gradients overflow and skips that optimizer step. A few halvings at the start and one now and then are its normal
work; a scale that keeps falling to 1 and below, or skipped steps that keep coming, mean the run is not training.
"""

from __future__ import annotations

from ..core.model import EventKind, Role, Series
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
    event_location,
    finite,
    per_series,
    too_few,
)
from .registry import check

TL_LOSS_SCALE = Rule("TL-LOSS-SCALE", Level.FAIL, "loss-scale", "The fp16 loss scale collapsed")
TL_LOSS_SCALE_DIP = Rule("TL-LOSS-SCALE-DIP", Level.WARN, "loss-scale",
                         "The fp16 loss scale fell to its floor and recovered")
TL_SKIPPED_STEPS = Rule("TL-SKIPPED-STEPS", Level.WARN, "skipped-steps",
                        "The trainer skipped a large share of its optimizer steps")


@check("loss-scale", TL_LOSS_SCALE, TL_LOSS_SCALE_DIP, order=90,
       description="an fp16 loss scale that fell to its floor",
       thresholds=("loss_scale_floor", "loss_scale_tail"))
def check_loss_scale(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def loss_scale_collapse(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.loss_scale_tail + 1, "finite loss scales")) is not None:
            return skip
        peak = max(range(len(vals)), key=lambda j: vals[j])
        low = min(range(len(vals)), key=lambda j: vals[j])
        tail = vals[-th.loss_scale_tail:]
        floor = th.loss_scale_floor
        values = {"series": s.label, "peak": vals[peak], "peak_step": Step(s.steps[idx[peak]]), "last": vals[-1],
                  "last_step": Step(s.steps[idx[-1]]), "lowest": vals[low], "lowest_step": Step(s.steps[idx[low]]),
                  "floor": floor, "tail": th.loss_scale_tail, "points": len(vals)}
        res.measurements.append(Measurement("loss-scale", s.label, values,
                                            f"peak {vals[peak]:g}, lowest {vals[low]:g}, last {vals[-1]:g}"))
        if vals[low] > floor or vals[peak] <= floor:
            return None
        if all(v <= floor for v in tail):
            rule = TL_LOSS_SCALE
            template = ("{series}: at or below {floor} at each of its last {tail} logged values, the last {last} at "
                        "step {last_step}; its peak was {peak} at step {peak_step}")
            message = ("The dynamic loss scale fell to the floor and stayed there: the scaler halves it at every "
                       "step whose gradients overflow fp16 and skips that step, so a scale at or below 1 means the "
                       "gradients overflow even unscaled and the optimizer is (nearly) no longer stepping. Look for "
                       "what produces the huge gradients (a learning rate too high, an fp16-unsafe operation); "
                       "bf16 or a lower learning rate are common ways out.")
            at = idx[-1]
        else:
            rule = TL_LOSS_SCALE_DIP
            template = ("{series}: fell to {lowest} at step {lowest_step} (floor {floor}) from a peak of {peak} at "
                        "step {peak_step}, and is back at {last} at step {last_step}")
            message = ("The dynamic loss scale reached the floor and then recovered: for a while the gradients "
                       "overflowed fp16 even unscaled, and those steps were skipped. The run went on; the steps "
                       "around the dip are the ones to look at.")
            at = idx[low]
        f = Finding(rule.id, rule.level, message, Evidence(values, template), ctx.point(s, at), s.label, s.key,
                    marks={idx[peak]: "peak", idx[low]: "lowest"})
        f.related.append(Related("peak", ctx.point(s, idx[peak]), "highest loss scale"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.LOSS_SCALE, res, loss_scale_collapse, "loss-scale")


@check("skipped-steps", TL_SKIPPED_STEPS, order=100, description="optimizer steps the trainer skipped",
       thresholds=("max_skipped_step_fraction",))
def check_skipped(ctx: Context) -> CheckResult:
    """Skipped steps as the trainer counts them: Megatron's per-interval "number of skipped iterations" (and
    "number of nan iterations"), DeepSpeed's "OVERFLOW! … Skipping step" lines. The skips before the first step
    that was taken are the scaler calibrating its initial scale (DeepSpeed starts at 2^16 or 2^32): not counted."""
    res = CheckResult()
    th = ctx.th
    log = ctx.log
    events = log.events_of(EventKind.SKIPPED_STEP)  # O(1): not a walk over every event of the log
    counts = [s for s in log.by_role(Role.SKIPPED) if "nan" not in s.name.lower()]
    nans = [s for s in log.by_role(Role.SKIPPED) if "nan" in s.name.lower()]
    steps = [s for role in (Role.TRAIN_LOSS, Role.LR, Role.GRAD_NORM) for s in log.by_role(role) if len(s)]
    if not events and not counts:
        res.skipped = SkipReason(Skip.NO_SERIES, "the log reports no skipped optimizer steps (no Megatron skip "
                                 "counts, no DeepSpeed OVERFLOW lines)")
        return res
    if counts:
        s = max(counts, key=len)
        idx, vals = finite(s)
        if (skip := too_few(len(vals), 2, "logged skip counts")) is not None:
            res.skipped = skip
            return res
        # the first interval holds the scaler's calibration; the intervals after it are the run
        skipped = sum(vals[1:])
        span = s.steps[idx[-1]] - s.steps[idx[0]]
        where = next((i for i, v in zip(reversed(idx), reversed(vals), strict=True) if v > 0), idx[-1])
        loc, label, key, first_step = ctx.point(s, where), s.label, s.key, s.steps[idx[0]]
        nan_total = sum(v for n in nans for v in finite(n)[1][1:])
    else:
        first_taken = min((x.steps[0] for x in steps), default=None)
        last_step = max((x.steps[-1] for x in steps), default=None)
        lead = 0  # overflows before the first logged step: the scaler calibrating
        while lead < len(events) and (events[lead].step is None or
                                      (first_taken is not None and events[lead].step < first_taken)):
            lead += 1
        skipped = len(events) - lead
        first_step = first_taken if first_taken is not None else 0.0
        span = (last_step - first_step) if last_step is not None else 0.0
        where_e = events[-1]
        label, key, nan_total = "OVERFLOW lines", None, 0.0
        loc = event_location(log, where_e)
    if span <= 0:
        res.skipped = SkipReason(Skip.TOO_FEW, "the logged steps do not span an interval to count skips over")
        return res
    share = skipped / span
    values = {"source": label, "skipped": int(skipped), "span": Step(span), "from_step": Step(first_step),
              "percent": Ratio(100 * share), "threshold": Ratio(100 * th.max_skipped_step_fraction),
              "nan": int(nan_total)}
    res.measurements.append(Measurement("skipped-steps", label, values, f"{int(skipped)} skipped over {span:g} steps"))
    res.coverage[label] = None
    if share <= th.max_skipped_step_fraction and not nan_total:
        return res
    template = ("{source}: {skipped} optimizer steps skipped over the {span} steps after step {from_step} "
                "({percent}%, threshold {threshold}%)")
    if nan_total:
        template += "; {nan} iterations with a NaN or infinite loss"
    res.findings.append(Finding(
        TL_SKIPPED_STEPS.id, TL_SKIPPED_STEPS.level,
        "The trainer reports that it skipped many optimizer steps (its loss scaler found overflowed gradients, or "
        "the loss itself was not finite): those batches did not train the model. A healthy fp16 run skips a few at "
        "the start and about one per loss-scale window after.",
        Evidence(values, template), loc, label, key))
    return res
