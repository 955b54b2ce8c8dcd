"""TL-HELDOUT-STILL: a held-out loss that stopped changing while evaluations went on.

An evaluation set is fixed, so the held-out loss moves only when the weights move: a model whose weights stopped
changing (parameters frozen, a zero learning rate, an optimizer that no longer steps) repeats its held-out loss to
its last digits, or drifts by what weight decay alone does (Lightning with AdamW, frozen: 4e-6 of the value per
evaluation). The train loss of such a run keeps its batch-to-batch noise, and a run without a logged gradient norm
or learning rate (a Lightning CSV of `train_loss` and `val_loss`) shows nothing else.

Measured on the series itself: the longest stretch of evaluations ending at the last that stays within
``heldout_still_rel_range`` of its lowest value. It fires when that stretch holds at least
``heldout_still_min_evals`` evaluations and either begins at the first evaluation of the run (the held-out loss
never moved) or, when evaluations came before it, is a small share (``heldout_still_movement_ratio``) of how far
the held-out loss moved per evaluation before it (the median absolute log change): a plateau reached by
converging keeps moving by a share of its earlier steps, a stopped model does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.model import Role, Series
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
    finite,
    median,
    per_series,
    too_few,
)
from .loss_level import _PRECISION_SAMPLE, _printed_resolution
from .registry import check
from .stats import run_start, stats

TL_HELDOUT_STILL = Rule("TL-HELDOUT-STILL", Level.WARN, "heldout-still",
                        "The held-out loss stopped changing while evaluations went on")

#: the changes before the stretch its movement is measured over: the last this many (a median of 64 is robust, and
#: a bounded span keeps a re-judge O(appended); the most recent changes are the smallest of a converging loss, so
#: the bound makes the rule no quicker to fire)
MOVEMENT_SPAN = 64


def still_stretch(s: Series, seg: int, tol: float) -> tuple[int, float, float]:
    """(finite position where the longest stretch ending at the last value within ``tol`` of its lowest begins, its
    lowest, its highest), from finite position ``seg`` on. Kept in the series' cache: a new value extends the
    stretch or ends it, and the new stretch begins no earlier than the old one (a value outside the old stretch's
    band cannot be inside a later one that holds it), so the walk back covers at most the old stretch."""
    st = stats(s)
    vals = st.fin_vals
    memo = st.memo.get("heldout-still")
    if not (isinstance(memo, list) and memo[0] == seg and memo[1] <= len(vals)):
        memo = st.memo["heldout-still"] = [seg, seg + 1, seg, vals[seg], vals[seg]]
    _, upto, start, lo, hi = memo
    for j in range(upto, len(vals)):
        v = vals[j]
        nlo, nhi = min(lo, v), max(hi, v)
        if nhi - nlo <= tol * nlo:
            lo, hi = nlo, nhi
            continue
        start, lo, hi = j, v, v
        for i in range(j - 1, memo[2] - 1, -1):
            nlo, nhi = min(lo, vals[i]), max(hi, vals[i])
            if nhi - nlo > tol * nlo:
                break
            start, lo, hi = i, nlo, nhi
        memo[2] = start
    memo[1:] = [len(vals), start, lo, hi]
    return start, lo, hi


def _sample(positions: range, k: int) -> list[int]:
    """At most ``k`` of ``positions``, evenly spread, the first and the last among them (without listing them all:
    the stretch of a stopped model is as long as the run)."""
    if len(positions) <= k:
        return list(positions)
    return [positions[round(j * (len(positions) - 1) / (k - 1))] for j in range(k)]


def movement_before(vals: Sequence[float], seg: int, start: int) -> tuple[float, int]:
    """(median absolute log change per evaluation, how many changes) over the last ``MOVEMENT_SPAN`` changes up to
    finite position ``start`` (the change into the stretch is the last the loss made before it)."""
    lo = max(seg + 1, start - MOVEMENT_SPAN + 1)
    changes = [abs(math.log(vals[i] / vals[i - 1])) for i in range(lo, start + 1)]
    return (median(changes), len(changes)) if changes else (math.nan, 0)


@check("heldout-still", TL_HELDOUT_STILL, order=165, description="a held-out loss that stopped changing",
       thresholds=("heldout_still_min_evals", "heldout_still_rel_range", "heldout_still_movement_ratio"))
def check_heldout_still(ctx: Context) -> CheckResult:
    """A held-out loss within a tiny band of its value over its last evaluations, from the first or after it
    moved far more per evaluation: consistent with weights that no longer change. WARN: the held-out loss alone
    cannot say why (the log cannot establish that the parameters were frozen)."""
    res = CheckResult()
    th = ctx.th

    def stopped(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        seg = run_start(s)
        if (skip := too_few(len(vals) - seg, th.heldout_still_min_evals, "finite evaluations")) is not None:
            return skip
        if stats(s).fin_min <= 0:
            return SkipReason(Skip.NOT_APPLICABLE, "a held-out value is not positive: its relative change is "
                              "undefined")
        start, lo, hi = still_stretch(s, seg, th.heldout_still_rel_range)
        k, spread = len(vals) - start, (hi - lo) / lo
        values: dict[str, object] = {"series": s.label, "evals": k, "spread": Ratio(spread),
                                     "tol": th.heldout_still_rel_range, "first_step": Step(s.steps[idx[start]]),
                                     "last_step": Step(s.steps[idx[-1]]), "low": lo, "high": hi}
        res.measurements.append(Measurement("heldout-still", s.label, values,
                                            f"last {k} evaluations within {spread:.3g} of their lowest"))
        if k < th.heldout_still_min_evals or s.steps[idx[-1]] <= s.steps[idx[start]]:
            return None
        if start > seg:
            moved, changes = movement_before(vals, seg, start)
            values.update(moved=Ratio(moved), changes=changes, ratio=th.heldout_still_movement_ratio,
                          share=Ratio(spread / moved if moved > 0 else math.inf), before=vals[start - 1],
                          before_step=Step(s.steps[idx[start - 1]]))
            if changes < 4 or not spread <= th.heldout_still_movement_ratio * moved:
                return None  # too few evaluations before to say how it moved, or a plateau it converged to
        res_rel = _printed_resolution(ctx, s, [idx[j] for j in _sample(range(start, len(vals)), _PRECISION_SAMPLE)])
        if res_rel is None or res_rel > th.heldout_still_rel_range:
            shown = "unknown" if res_rel is None else f"{res_rel:.2g} of the value"
            return SkipReason(Skip.NOT_APPLICABLE, f"the last {k} evaluations agree at the printed precision "
                              f"({shown}), coarser than {th.heldout_still_rel_range:g}: a change can hide in it")
        res.findings.append(_finding(ctx, s, idx, start, values))
        return None

    return per_series(ctx, Role.EVAL_LOSS, res, stopped, "held-out loss")


def _finding(ctx: Context, s: Series, idx: Sequence[int], start: int, values: dict[str, object]) -> Finding:
    if "moved" in values:
        template = ("{series}: the last {evals} evaluations (steps {first_step} to {last_step}) lie between {low} "
                    "and {high}, within {spread} of the lowest (tolerance {tol}); before them it moved by {moved} "
                    "per evaluation (median absolute log change of {changes}; {before} at step {before_step}): the "
                    "spread is {share} of that (at most {ratio})")
        message = ("The held-out loss stopped changing: over its last evaluations it stays within a tiny band, "
                   "after moving far more per evaluation before. An evaluation set is fixed, so the model's outputs "
                   "on it stopped changing: weights that no longer change (frozen parameters, a zero learning rate, "
                   "an optimizer that stopped stepping) or a model collapsed to one output (dead units after a "
                   "divergence). The log does not say which.")
    else:
        template = ("{series}: all {evals} evaluations (steps {first_step} to {last_step}) lie between {low} and "
                    "{high}, within {spread} of the lowest (tolerance {tol})")
        message = ("The held-out loss has not changed since the first evaluation while training went on. An "
                   "evaluation set is fixed, so the model's outputs on it did not change: weights that do not "
                   "change (frozen parameters, a zero learning rate, an optimizer that never steps) or a model "
                   "that outputs one value whatever its input. The log does not say which.")
    first = idx[start]
    f = Finding(TL_HELDOUT_STILL.id, TL_HELDOUT_STILL.level, message, Evidence(values, template),
                ctx.point(s, first), s.label, s.key, marks={first: "first-still", idx[-1]: "end"})
    f.related.append(Related("end", ctx.point(s, idx[-1]), "the last evaluation"))
    return f
