"""TP-ZERO-LR and TP-ZERO-LR-PARTIAL: learning rates at or below zero."""

from __future__ import annotations

import math

from ..model import Role, Series
from .base import (
    Check,
    CheckResult,
    Context,
    Evidence,
    Finding,
    Level,
    Measurement,
    Ratio,
    Rule,
    Skip,
    SkipReason,
    Step,
    per_series,
)
from .stats import stats

TP_ZERO_LR = Rule("TP-ZERO-LR", Level.FAIL, "lr", "The learning rate is zero (or negative) throughout")
TP_ZERO_LR_PARTIAL = Rule("TP-ZERO-LR-PARTIAL", Level.WARN, "lr", "The learning rate is zero for a large share")


def check_lr(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def one(s: Series) -> SkipReason | None:
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

    return per_series(ctx, Role.LR, res, one, "learning-rate")


CHECKS = (Check("lr", (TP_ZERO_LR, TP_ZERO_LR_PARTIAL), check_lr, "share of learning rates <= 0"),)
