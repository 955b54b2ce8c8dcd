"""TP-OVERFIT, and what every held-out series shows.

Each held-out series is judged on its own. Whether it fires or not, its trend is measured
(improved at k of m evaluations, first to last), so a report shows at a glance when the held-out
loss contradicts a train-loss finding.
"""

from __future__ import annotations

import bisect
import math

from ..core.model import Role, Series
from ..core.roles import quantity, same_run
from ..core.values import fmt_step, fmt_value
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
from .registry import check
from .stats import first_finite_at, stats

TP_OVERFIT = Rule("TP-OVERFIT", Level.WARN, "overfit", "Held-out loss rose after its best evaluation")
TL_EVAL_BELOW_TRAIN = Rule("TL-EVAL-BELOW-TRAIN", Level.WARN, "heldout-gap",
                           "Held-out loss far below the train loss at nearly every evaluation")
TL_HELDOUT_RISE = Rule("TL-HELDOUT-RISE", Level.WARN, "overfit",
                       "Held-out loss rose after its best evaluation while the train loss did not fall")


def heldout_trend(s: Series) -> dict[str, object] | None:
    st = stats(s)
    idx, vals = st.fin_idx, st.fin_vals
    if len(vals) < 2:
        return None
    improved, best = st.fin_improved, st.fin_best
    return {"series": s.label, "evaluations": len(vals), "improved": improved, "intervals": len(vals) - 1,
            "first": vals[0], "last": vals[-1], "best": vals[best], "best_step": Step(s.steps[idx[best]])}


@check("overfit", TP_OVERFIT, TL_HELDOUT_RISE, order=160, description="held-out loss after its best evaluation",
       thresholds=("overfit_min_evals", "overfit_tail", "overfit_ratio"))
def check_overfit(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th
    train, _ = ctx.judged(Role.TRAIN_LOSS)

    def held_out_rise(s: Series) -> SkipReason | None:
        train_s = max(same_run(train, s.name), key=len) if train else None
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
        best = stats(s).fin_best
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
            _, t_vals = finite(train_s)
            at = first_finite_at(train_s, s.steps[idx[best]])
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
                       "first held_out_rise, the weights the run started from were the best it produced.")
        last_i = idx[-1]
        f = Finding(rule.id, rule.level, message, Evidence(values, template), ctx.point(s, last_i), s.label, s.key,
                    marks={last_i: "end", idx[best]: "best"})
        f.related.append(Related("minimum", ctx.point(s, idx[best]), "best held-out evaluation"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.EVAL_LOSS, res, held_out_rise, "held-out loss")


def _axis(s: Series) -> str:
    return {"progress-bar": "step"}.get(s.step_basis, s.step_basis)


Pair = tuple[int, float, float]  # (eval point, eval value, train level up to it)


class _Tally:
    """Pairs counted: how many, how many below the ratio, the first, the last, and the last below."""

    __slots__ = ("below", "count", "first", "last", "last_below")

    def __init__(self) -> None:
        self.count = self.below = 0
        self.first: Pair | None = None
        self.last: Pair | None = None
        self.last_below: Pair | None = None

    def take(self, p: Pair | None, ratio: float) -> None:
        if p is None:
            return
        self.count += 1
        if p[1] < ratio * p[2]:
            self.below += 1
            self.last_below = p
        self.first = self.first or p
        self.last = p

    def copy(self) -> _Tally:
        t = _Tally()
        t.count, t.below, t.first, t.last, t.last_below = self.count, self.below, self.first, self.last, self.last_below
        return t


class _GapPairs:
    """Evaluations paired for good: those whose train level can no longer change (train points were logged
    past their step). The rest are paired again at each judge."""

    def __init__(self, train_stats: object) -> None:
        self.train_stats = train_stats
        self.done = 0                  # finite eval positions paired for good
        self.final = _Tally()


def gap_pairs(s: Series, train_s: Series, w: int, ratio: float) -> _Tally:
    """Pairs of held-out ``s`` with the median of at most ``w`` finite ``train_s`` points up to each evaluation
    (train steps must not go back); evaluations logged as exactly 0 are placeholders, not paired."""
    memo = stats(s).memo
    key = ("gap", train_s.key, w, ratio)
    gp = memo.get(key)
    t_st = stats(train_s)
    if not isinstance(gp, _GapPairs) or gp.train_stats is not t_st or gp.done > len(finite(s)[0]):
        gp = memo[key] = _GapPairs(t_st)
    idx, vals = finite(s)
    t_idx, t_vals = t_st.fin_idx, t_st.fin_vals
    t_last = train_s.steps[t_idx[-1]] if t_idx else -math.inf
    t_step = train_s.steps.__getitem__

    def pair(k: int) -> Pair | None:
        i, v = idx[k], vals[k]
        if v == 0:  # a placeholder, not a measurement (ultralytics logs 0 for epochs it did not validate)
            return None
        j = bisect.bisect_right(t_idx, s.steps[i], key=t_step)
        window = t_vals[max(0, j - w):j]
        if window and (level := median(window)) > 0:
            return (i, v, level)
        return None

    while gp.done < len(idx) and s.steps[idx[gp.done]] < t_last:  # no train point can join its window now
        gp.final.take(pair(gp.done), ratio)
        gp.done += 1
    now = gp.final.copy()
    for k in range(gp.done, len(idx)):
        now.take(pair(k), ratio)
    return now


@check("heldout-gap", TL_EVAL_BELOW_TRAIN, order=170, description="held-out loss far below the train loss",
       thresholds=("eval_below_train_ratio", "eval_below_train_share", "eval_below_train_min_evals",
                   "eval_below_train_window"))
def check_gap(ctx: Context) -> CheckResult:
    """Held-out loss a fraction of the train loss at (nearly) every evaluation, from the first: the evaluation
    does not measure what the train loss measures (evaluated on training data without dropout, a leak, or the
    two losses normalised differently). A modest gap is normal (dropout, augmentation, the train loss averaged
    over a window that started higher), so the threshold is a large one."""
    res = CheckResult()
    th = ctx.th
    trains = ctx.log.by_role(Role.TRAIN_LOSS)
    evals, _ = ctx.judged(Role.EVAL_LOSS)

    def held_out_below_train(s: Series) -> SkipReason | None:
        # Steps of one axis only: an epoch-numbered `val loss` is not set against a bar-stepped `loss`.
        axis = [t for t in same_run(trains, s.name) if _axis(t) == _axis(s)]
        same = [t for t in axis if quantity(t.name) == quantity(s.name)]
        if not same and len(axis) == 1 and len(evals) == 1:
            same = axis  # one train loss, one held-out loss: they are each other's, whatever their names
        if not same:
            return SkipReason(Skip.NOT_APPLICABLE, "no train loss of the same quantity, stepped the same way, to "
                              "set it against")
        train_s = max(same, key=len)
        if stats(train_s).last_seam:
            return SkipReason(Skip.NOT_APPLICABLE, f"{train_s.label} steps go back (a restart): evaluations cannot "
                              "be matched to train points by step")
        zeros = stats(s).zeros
        pairs = gap_pairs(s, train_s, th.eval_below_train_window, th.eval_below_train_ratio)
        placeholders = f"{zeros} logged exactly 0 are placeholders, not evaluations" if zeros else ""
        if (skip := too_few(pairs.count, th.eval_below_train_min_evals,
                            f"evaluations with {train_s.label} logged before them", placeholders)) is not None:
            return skip
        share = pairs.below / pairs.count
        i_last, v_last, t_last = pairs.last_below or pairs.last
        i_first, v_first, t_first = pairs.first
        values = {"series": s.label, "train_series": train_s.label, "below": pairs.below, "evals": pairs.count,
                  "threshold": Ratio(th.eval_below_train_ratio), "last": v_last, "train_last": t_last,
                  "last_ratio": Ratio(v_last / t_last), "last_step": Step(s.steps[i_last]), "first": v_first,
                  "train_first": t_first, "first_ratio": Ratio(v_first / t_first),
                  "first_step": Step(s.steps[i_first]), "window": th.eval_below_train_window}
        res.measurements.append(Measurement("heldout-gap", s.label, values,
                                            f"held-out/train {v_first / t_first:.3g} at the first evaluation, "
                                            f"{v_last / t_last:.3g} at the last"))
        if share < th.eval_below_train_share:
            return None
        template = ("{series}: below {threshold}x {train_series} at {below} of {evals} evaluations; at the first "
                    "(step {first_step}) {first} against {train_first} ({first_ratio}x), at the last below it (step "
                    "{last_step}) {last} against {train_last} ({last_ratio}x); the train level is the median of "
                    "at most {window} train points up to each evaluation")
        f = Finding(TL_EVAL_BELOW_TRAIN.id, TL_EVAL_BELOW_TRAIN.level,
                    "The held-out loss is a fraction of the train loss from the first evaluation on. A modest gap "
                    "is normal (dropout and augmentation act only in training); one this large usually means the "
                    "two do not measure the same thing: evaluation on training data, examples shared between the "
                    "splits, or losses summed or normalised differently. Check how the held-out set and its loss "
                    "are built before trusting either curve.",
                    Evidence(values, template), ctx.point(s, i_last), s.label, s.key,
                    marks={i_last: "end", i_first: "start"})
        f.related.append(Related("first", ctx.point(s, i_first), "the first evaluation"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.EVAL_LOSS, res, held_out_below_train, "held-out loss")
