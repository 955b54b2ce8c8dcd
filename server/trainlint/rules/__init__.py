"""The rule registry: every check in the order it runs, and every rule ID it can emit.

Docs pages (docs/rules/<ID>.md) and the tests that keep them in step read ``RULES``.
"""

from __future__ import annotations

from . import compare, dataset, grad, hidden_nan, loss_level, lr, nan, overfit, precision, run_level, timing
from .base import Check, Level, Rule

CHECKS: tuple[Check, ...] = (
    nan.CHECKS[0],                 # non-finite-loss
    loss_level.CHECKS[0],          # zero-loss
    grad.CHECKS[0],                # zero-grad
    nan.CHECKS[1],                 # grad-finite
    *hidden_nan.CHECKS,            # hidden-nan
    loss_level.CHECKS[1],          # flat-loss
    loss_level.CHECKS[2],          # divergence
    loss_level.CHECKS[3],          # dead-run
    grad.CHECKS[1],                # grad-spike
    *precision.CHECKS,             # loss-scale, skipped-steps
    lr.CHECKS[0],                  # lr
    lr.CHECKS[1],                  # lr-warmup
    lr.CHECKS[2],                  # lr-resume
    timing.CHECKS[0],              # step-time
    timing.CHECKS[1],              # loader
    overfit.CHECKS[0],             # overfit
    overfit.CHECKS[1],             # heldout-gap
    *run_level.CHECKS,             # log-coverage, run-end, resume, events-integrity, checkpoints
    timing.CHECKS[2],              # throughput
    timing.CHECKS[3],              # gpu-util
)

TP_NO_LOSS = Rule("TP-NO-LOSS", Level.NOT_CHECKED, "-", "No loss series to judge")
TP_NOT_CHECKED = Rule("TP-NOT-CHECKED", Level.NOT_CHECKED, "-", "Nothing could be judged")
TP_PASS = Rule("TP-PASS", Level.PASS, "-", "Every check that ran passed")

SUMMARY_RULES = (TP_NO_LOSS, TP_NOT_CHECKED, TP_PASS)


def _all_rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for c in CHECKS:
        for r in c.rules:
            out[r.id] = r
    for r in SUMMARY_RULES + run_level.POST_RULES + compare.RULES + dataset.RULES:
        out[r.id] = r
    return out


RULES: dict[str, Rule] = _all_rules()

