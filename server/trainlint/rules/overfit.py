"""TP-OVERFIT, and what every held-out series shows.

Each held-out series is judged on its own. Whether it fires or not, its trend is measured
(improved at k of m evaluations, first to last), so a report shows at a glance when the held-out
loss contradicts a train-loss finding.
"""

from __future__ import annotations

import itertools

from ..model import Role, Series
from ..output.values import fmt_step, fmt_value
from .base import (
    Check,
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
    finite,
    median,
    per_series,
    too_few,
)

TP_OVERFIT = Rule("TP-OVERFIT", Level.WARN, "overfit", "Held-out loss rose after its best evaluation")
TL_HELDOUT_RISE = Rule("TL-HELDOUT-RISE", Level.WARN, "overfit",
                       "Held-out loss rose after its best evaluation while the train loss did not fall")


def heldout_trend(s: Series) -> dict[str, object] | None:
    idx, vals = finite(s)
    if len(vals) < 2:
        return None
    improved = sum(1 for a, b in itertools.pairwise(vals) if b < a)
    best = min(range(len(vals)), key=lambda j: vals[j])
    return {"series": s.label, "evaluations": len(vals), "improved": improved, "intervals": len(vals) - 1,
            "first": vals[0], "last": vals[-1], "best": vals[best], "best_step": Step(s.steps[idx[best]])}


def check_overfit(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    train_s = max(train, key=len) if train else None

    def one(s: Series) -> SkipReason | None:
        trend = heldout_trend(s)
        if trend is not None:
            res.measurements.append(Measurement(
                "heldout-trend", s.label, trend,
                f"improved at {trend['improved']} of {trend['intervals']} evaluations, "
                f"{fmt_value(trend['first'])} -> {fmt_value(trend['last'])} (best {fmt_value(trend['best'])} at step "
                f"{fmt_step(trend['best_step'])})"))
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.overfit_min_evals, "finite evaluations")) is not None:
            return skip
        best = min(range(len(vals)), key=lambda j: vals[j])
        after = len(vals) - 1 - best
        if after < th.overfit_tail:
            res.measurements.append(Measurement("overfit", s.label, {"evals_after_best": after},
                                                f"best evaluation is {after} from the end"))
            return None
        tail = median(vals[-th.overfit_tail:])
        ratio = tail / vals[best] if vals[best] > 0 else float("inf")
        values = {"series": s.label, "best": vals[best], "best_step": Step(s.steps[idx[best]]), "tail": tail,
                  "tail_evals": th.overfit_tail, "ratio": Ratio(ratio), "threshold": th.overfit_ratio}
        res.measurements.append(Measurement("overfit", s.label, values, f"last {th.overfit_tail}/best {ratio:.3g}"))
        if vals[best] <= 0 or ratio <= th.overfit_ratio:
            return None
        template = ("{series}: best {best} at step {best_step}; the median of the last {tail_evals} evaluations is "
                    "{tail}, {ratio}x the best (threshold {threshold})")
        if train_s is not None:
            t_idx, t_vals = finite(train_s)
            at = next((j for j, i in enumerate(t_idx) if train_s.steps[i] >= s.steps[idx[best]]), None)
            if at is None or not t_vals:
                return SkipReason(Skip.NOT_APPLICABLE, "no train loss logged after the best evaluation")
            values.update(train_series=train_s.label, train_then=t_vals[at], train_end=t_vals[-1])
            fell = t_vals[-1] < t_vals[at]
        else:
            fell = True  # no train loss: the held-out rise alone, as trainproof judges it
        if fell:
            rule = TP_OVERFIT
            if train_s is not None:
                template += "; meanwhile {train_series} fell from {train_then} to {train_end}"
            message = ("The held-out loss rose after its best evaluation while the train loss kept falling: the "
                       "model is fitting the training data at the expense of generalisation. The best weights are "
                       "those near the best evaluation.")
        else:  # not the overfitting pattern, but the held-out loss still got worse: say so on its own line
            rule = TL_HELDOUT_RISE
            template += "; meanwhile {train_series} went from {train_then} to {train_end}"
            message = ("The held-out loss got worse after its best evaluation and the train loss did not fall "
                       "meanwhile: the model is not improving on held-out data. When the best evaluation is the "
                       "first one, the weights the run started from were the best it produced.")
        last_i = idx[-1]
        f = Finding(rule.id, rule.level, message, Evidence(values, template), ctx.point(s, last_i), s.label, s.key,
                    marks={last_i: "end", idx[best]: "best"})
        f.related.append(Related("minimum", ctx.point(s, idx[best]), "best held-out evaluation"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.EVAL_LOSS, res, one, "held-out loss")


CHECKS = (Check("overfit", (TP_OVERFIT, TL_HELDOUT_RISE), check_overfit, "held-out loss after its best evaluation"),)
