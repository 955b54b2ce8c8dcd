"""TP-ZERO-GRAD and TP-GRAD-SPIKE: what the logged gradient norms show."""

from __future__ import annotations

import math

from ..core.model import Role, Series
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
    per_series,
    too_few,
)
from .noise import fitted_change, log_noise
from .registry import check
from .stats import run_start, stats, window

TP_ZERO_GRAD = Rule("TP-ZERO-GRAD", Level.FAIL, "zero-grad", "Every gradient norm is exactly zero")
TL_ZERO_GRAD_ONSET = Rule("TL-ZERO-GRAD-ONSET", Level.FAIL, "zero-grad",
                          "The gradient norm ends in a run of exact zeros")
TP_GRAD_SPIKE = Rule("TP-GRAD-SPIKE", Level.WARN, "grad-spike", "A gradient norm far above its median")
MAX_RELATED = 5


def _loss_improved(ctx: Context) -> tuple[bool, dict[str, object]]:
    """Whether the train loss measurably fell: a least-squares line through its log values (from the last restart
    seam) falls from start to end by more than ``dead_run_noise_z`` of its standard errors (sigma sqrt(12 / n), the
    sigma measured from the series' own point-to-point changes, rules/noise.py), with what was measured. Comparing
    its lowest point with its first called every noisy per-batch loss improved (a frozen run's 7.46 against 9.388)
    and waived an all-zero gradient norm that meant what it said. Running sums and a bounded noise span: O(appended)."""
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    if not train:
        return False, {}
    s = max(train, key=len)
    seg = run_start(s)
    _, vals = finite(s)
    fit, n = fitted_change(s, seg)
    if n < 3:
        return False, {}
    sigma, changes = log_noise(vals, seg, len(vals))
    se = sigma * math.sqrt(12 / n) if sigma == sigma else 0.0
    z = ctx.th.dead_run_noise_z
    measured = {"loss_series": s.label, "fitted": Ratio(1 - math.exp(-fit)), "fit_points": n,
                "sigma": Ratio(sigma if sigma == sigma else 0.0), "changes": changes, "z_fall": Ratio(z),
                "allowed": Ratio(1 - math.exp(-(fit - z * se)))}
    return fit > z * se, measured


def _zero_tail(s: Series) -> int:
    """How many finite values at the end of ``s`` are exactly 0 (kept in the series' cache: O(appended))."""
    st = stats(s)
    vals = st.fin_vals
    seen, tail = st.memo.get("zero-grad-tail", (0, 0))  # type: ignore[misc]
    if seen > len(vals):
        seen, tail = 0, 0
    for j in range(seen, len(vals)):
        tail = tail + 1 if vals[j] == 0.0 else 0
    st.memo["zero-grad-tail"] = (len(vals), tail)
    return tail




@check("zero-grad", TP_ZERO_GRAD, TL_ZERO_GRAD_ONSET, order=30,
       description="gradient norms that are (or end) all zero",
       thresholds={"TP-ZERO-GRAD": ("min_grad_points_for_zero", "dead_run_noise_z"),
                   "TL-ZERO-GRAD-ONSET": ("min_zero_tail_for_onset", "min_grad_points_for_zero")})
def check_zero_grad(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def zero_grad_norms(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_grad_points_for_zero, "finite gradient norms")) is not None:
            return skip
        tail = _zero_tail(s)
        zeros = tail == len(vals)
        res.measurements.append(Measurement("zero-grad", s.label, {"all_zero": zeros, "zero_tail": tail},
                                            f"all zero: {zeros}; ends in {tail} exact zeros"))
        if not zeros:
            if tail >= th.min_zero_tail_for_onset:
                onset, last_pos = idx[len(vals) - tail], idx[len(vals) - tail - 1]
                values = {"series": s.label, "last_positive": s.values[last_pos],
                          "last_positive_step": Step(s.steps[last_pos]), "zeros": tail,
                          "onset_step": Step(s.steps[onset])}
                f = Finding(TL_ZERO_GRAD_ONSET.id, TL_ZERO_GRAD_ONSET.level,
                            "The gradient norm dropped to exactly zero and stayed there: from this step no gradient "
                            "reaches the parameters (frozen or detached parameters, requires_grad switched off, a "
                            "loss cut from the graph). A real gradient norm is rarely exactly 0.0 twice.",
                            Evidence(values, "{series}: last positive value {last_positive} at step "
                                             "{last_positive_step}, then {zeros} consecutive values of exactly zero "
                                             "from step {onset_step}"),
                            ctx.point(s, onset), s.label, s.key, marks={onset: "first-zero", last_pos: "last-positive"})
                f.related.append(Related("last-positive", ctx.point(s, last_pos), "last positive gradient norm"))
                res.findings.append(f)
            return None
        improved, measured = _loss_improved(ctx)
        if improved:
            return SkipReason(Skip.WAIVED, f"all {len(vals)} values are 0.0 but {measured['loss_series']} fell "
                              f"{float(measured['fitted']):.3g} along a line through its {measured['fit_points']} "
                              f"log values, more than {float(measured['z_fall']):g} standard errors of its noise: "
                              "this series is an aggregate that does not report the true gradient norm")
        template = "{series}: all {points} finite values are exactly zero"
        if measured:
            template += ("; a line through the {fit_points} log values of {loss_series} falls {fitted} from start to "
                         "end, {allowed} less {z_fall} standard errors (log-loss noise {sigma}, from the MAD of "
                         "{changes} point-to-point changes): not above zero")
        f = Finding(TP_ZERO_GRAD.id, TP_ZERO_GRAD.level,
                    "Every logged gradient norm is exactly zero and the loss did not measurably improve: no gradient "
                    "may be reaching the trainable parameters (frozen or detached parameters, adapters not "
                    "attached, reentrant checkpointing with PEFT).",
                    Evidence({"series": s.label, "points": len(vals), **measured}, template),
                    ctx.point(s, idx[0]), s.label, s.key, marks={idx[0]: "first-zero"})
        res.findings.append(f)
        return None

    return per_series(ctx, Role.GRAD_NORM, res, zero_grad_norms, "gradient-norm")


@check("grad-spike", TP_GRAD_SPIKE, order=80, description="gradient norms far above their median",
       thresholds=("max_grad_norm_spike_ratio", "min_grad_points_for_spike"))
def check_grad_spike(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def grad_norm_spikes(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_grad_points_for_spike, "finite gradient norms")) is not None:
            return skip
        # The first steps of from-scratch training have large gradient norms by nature (llm.c: 15.4 at step 0,
        # then 0.3): they are neither judged nor part of the median the others are judged against.
        skip_n = max(1, math.ceil(th.grad_spike_initial_fraction * len(vals)))
        judged = window(s, "grad-spike", skip_n, len(vals), positions=True)
        ordered = judged.items  # (value, position), ascending, in blocks
        med = judged.upper_median()  # trainproof's upper median
        if med <= 0:
            return SkipReason(Skip.DEGENERATE, "the median gradient norm is not positive")
        limit = th.max_grad_norm_spike_ratio * med
        k = ordered.bisect_right((limit, math.inf))
        n_spikes = len(ordered) - k
        top = ordered[ordered.bisect_left((ordered[-1][0],))][1]  # the first of the largest
        values = {"series": s.label, "max": vals[top], "step": Step(s.steps[idx[top]]), "median": med,
                  "ratio": Ratio(vals[top] / med), "threshold": th.max_grad_norm_spike_ratio, "spikes": n_spikes,
                  "points": len(vals) - skip_n, "from_step": Step(s.steps[idx[skip_n]])}
        res.measurements.append(Measurement("grad-spike", s.label, values, f"max/median {vals[top] / med:.3g}"))
        if not n_spikes:
            return None
        f = Finding(TP_GRAD_SPIKE.id, TP_GRAD_SPIKE.level,
                    "A gradient norm this far above its median is a sudden large update: it may come from a bad "
                    "batch, a learning rate too high for this stage, or missing gradient clipping. One spike that "
                    "the loss recovers from is often harmless; repeated spikes are not.",
                    Evidence(values, "{series}: maximum {max} at step {step} is {ratio}x the median {median} "
                                     "(threshold {threshold}); {spikes} of {points} values from step {from_step} "
                                     "exceed it"),
                    ctx.point(s, idx[top]), s.label, s.key, marks={idx[top]: "spike"})
        # the largest few spikes after the top one (equal values in log order): only the window's top end
        cut = max(k, len(ordered) - (MAX_RELATED + 1))
        cut = max(k, ordered.bisect_left((ordered[cut][0],)))
        others = sorted((j for _, j in ordered.tail(cut) if j != top), key=lambda j: (-vals[j], j))[:MAX_RELATED]
        for j in sorted(others):
            f.related.append(Related("spike", ctx.point(s, idx[j]),
                                     f"{fmt_value(vals[j])} at step {fmt_step(s.steps[idx[j]])}"))
            f.marks[idx[j]] = "spike"
        res.findings.append(f)
        return None

    return per_series(ctx, Role.GRAD_NORM, res, grad_norm_spikes, "gradient-norm")
