"""The loss-level family: TP-ZERO-LOSS, TP-ZERO-LOSS-ONSET, TP-FLAT, TP-FLAT-ONSET, TP-DIVERGE, TP-DEAD-RUN.

Each judges every train-loss series on its own. TP-DIVERGE compares the *level* at the end
with the lowest *level* the loss held, both medians over a window, so one noisy batch at either
place cannot decide it; a window of 1 reproduces trainproof's last-point-versus-minimum test.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..core.model import Role, Series
from ..core.roles import same_run
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
    too_early,
    too_few,
    upper_median,
)
from .noise import fitted_change, highest_fitted, level_se, log_noise, noise_upper, selection, z_of
from .registry import check
from .stats import lowest_level, run_start, stats
from .thresholds import Thresholds

TP_ZERO_LOSS = Rule("TP-ZERO-LOSS", Level.FAIL, "zero-loss", "Every loss value is exactly zero")
TP_ZERO_LOSS_ONSET = Rule("TP-ZERO-LOSS-ONSET", Level.FAIL, "zero-loss", "The loss ends in a run of exact zeros")
TP_FLAT = Rule("TP-FLAT", Level.FAIL, "flat-loss", "The loss does not vary")
TP_FLAT_ONSET = Rule("TP-FLAT-ONSET", Level.FAIL, "flat-onset", "The loss becomes constant from a step")
TP_DIVERGE = Rule("TP-DIVERGE", Level.FAIL, "divergence", "The loss ends far above its lowest level")
TP_DEAD_RUN = Rule("TP-DEAD-RUN", Level.FAIL, "dead-run", "The loss did not improve from start to end")


def _nonfinite_grads_from(ctx: Context, step: float) -> tuple[int, int]:
    grads, _ = ctx.judged(Role.GRAD_NORM)
    vals = [v for s in grads for x, v in zip(s.steps, s.values, strict=True) if x >= step]
    return sum(1 for v in vals if not math.isfinite(v)), len(vals)


def _heldout_rise(ctx: Context, s: Series) -> tuple[str, float, float, float] | None:
    """A held-out loss of the same run that ends above its best by the overfit ratio (its label, best, last,
    ratio): a second series that saw the rise. O(1): the best and last come from its cache."""
    for h in same_run(ctx.judged(Role.EVAL_LOSS)[0], s.name):
        st = stats(h)
        if st.count_fin < 2 or st.fin_best < 0:
            continue
        best, last = st.fin_vals[st.fin_best], st.fin_vals[-1]
        if best > 0 and st.fin_best < st.count_fin - 1 and last / best > ctx.th.overfit_ratio:
            return h.label, best, last, last / best
    return None


def _heldout_falling(ctx: Context, s: Series) -> tuple[str, int, float, float] | None:
    """A held-out loss of the same run lower at each evaluation than at the one before, over at least two
    intervals (its label, intervals, first, last): a measurement that the model learned, whatever a noisy per-step
    train loss says between two windows. An evaluation set is fixed, so a frozen or unlearning model repeats or
    wanders; it does not fall at every evaluation. The same criterion TL-SERIES-DISAGREE states beside a
    divergence. O(appended): how far the check got is kept in the held-out series' cache."""
    for h in same_run(ctx.judged(Role.EVAL_LOSS)[0], s.name):
        st = stats(h)
        vals = st.fin_vals
        memo = st.memo.get("falling")
        if not (isinstance(memo, list) and memo[0] <= len(vals)):
            memo = st.memo["falling"] = [1, True]
        upto, falling = memo
        for j in range(upto, len(vals)) if falling else ():
            if not vals[j] < vals[j - 1]:
                falling = False
                break
        memo[:] = [max(upto, len(vals)), falling]
        if falling and len(vals) >= 3:
            return h.label, len(vals) - 1, vals[0], vals[-1]
    return None


_FIXED = re.compile(r"[-+]?\d+\.(\d+)")
#: how many printed values the precision is read from (each is a line read from disk): bounded, whatever the length
_PRECISION_SAMPLE = 16


def _sample(positions: list[int], k: int) -> list[int]:
    """At most ``k`` of ``positions``, evenly spread, the first and the last among them."""
    if len(positions) <= k:
        return positions
    return [positions[round(j * (len(positions) - 1) / (k - 1))] for j in range(k)]


def _printed(ctx: Context, s: Series, i: int) -> list[str] | None:
    """The tokens point ``i`` of ``s`` is printed as on its line (``Locator.texts``: [] when its line or its text
    cannot be found); None for a record of a binary log, which holds the float itself."""
    if s.records and s.records[i] >= 0:
        return None
    if s.locator is None or s.lines[i] <= 0 or (text := ctx.log.line_text(s.lines[i], s.member)) is None:
        return []
    return s.locator.texts(text, s.values[i])


def _printed_decimals(ctx: Context, s: Series, points: list[int]) -> int | None:
    """The number of decimals every one of ``points`` of ``s`` is printed with, when it is the same fixed-point
    count for all of them, between 2 and ``printed_zero_max_decimals`` (else None: an exponent, an integer, a
    varying count as Python's repr prints, one decimal as repr prints an exact 0.0, or no text: a record of a
    binary log holds the float itself)."""
    if s.locator is None or not points:
        return None
    common = set(range(2, ctx.th.printed_zero_max_decimals + 1))
    for i in points:
        if (toks := _printed(ctx, s, i)) is None:
            return None
        common &= {len(m.group(1)) for tok in toks if (m := _FIXED.fullmatch(tok)) is not None}
        if not common:
            return None
    return common.pop() if len(common) == 1 else None


def _zeros_printed(ctx: Context, s: Series, idx: Sequence[int], tail: int) -> SkipReason | None:
    """NOT-CHECKED when the ``tail`` zeros ending the series (all of it for TP-ZERO-LOSS) are zeros at the
    printed precision: they and the values before them all printed with the same few decimals."""
    zeros = _sample(list(idx[len(idx) - tail:]), _PRECISION_SAMPLE)
    before = list(idx[max(0, len(idx) - tail - _PRECISION_SAMPLE):len(idx) - tail])
    d = _printed_decimals(ctx, s, zeros + before)
    if d is None:
        return None
    return SkipReason(Skip.NOT_APPLICABLE, f"zeros at the printed precision ({d} decimals): every value read is "
                      f"printed with {d} decimals, so 0.{'0' * d} is a value below {0.5 * 10 ** -d:g}, not an "
                      "exact zero")


@check("zero-loss", TP_ZERO_LOSS, TP_ZERO_LOSS_ONSET, order=20, description="exact-zero losses",
       thresholds={"TP-ZERO-LOSS": ("min_points_for_degenerate_check", "printed_zero_max_decimals"),
                   "TP-ZERO-LOSS-ONSET": ("min_zero_tail_for_onset", "printed_zero_max_decimals")})
def check_zero_loss(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def zero_losses(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_points_for_degenerate_check)) is not None:
            return skip
        st = stats(s)
        if st.mean == 0.0 and st.m2 == 0.0 and vals[0] == 0.0:
            if (printed := _zeros_printed(ctx, s, idx, len(idx))) is not None:
                return printed
            ev = Evidence({"series": s.label, "points": len(vals)},
                          "{series}: all {points} finite values are exactly zero")
            res.findings.append(Finding(
                TP_ZERO_LOSS.id, TP_ZERO_LOSS.level,
                "A loss of exactly zero at every logged step usually means nothing is being learned from: "
                "every label masked (-100), empty targets, or a loss that is not connected to the model.",
                ev, ctx.point(s, idx[0]), s.label, s.key, marks={idx[0]: "first-zero"}))
            return None
        tail = 0
        for v in reversed(vals):
            if v != 0.0:
                break
            tail += 1
        res.measurements.append(Measurement("zero-loss", s.label, {"zero_tail": tail}, f"ends in {tail} exact zeros"))
        if tail >= th.min_zero_tail_for_onset and any(v > 0 for v in vals[:-tail]):
            if (printed := _zeros_printed(ctx, s, idx, tail)) is not None:
                return printed
            onset = idx[len(vals) - tail]
            last_pos = idx[len(vals) - tail - 1]
            values = {"series": s.label, "last_positive": s.values[last_pos],
                      "last_positive_step": Step(s.steps[last_pos]), "zeros": tail, "onset_step": Step(s.steps[onset])}
            template = ("{series}: last positive value {last_positive} at step {last_positive_step}, then {zeros} "
                        "consecutive values of exactly zero from step {onset_step}")
            bad_g, all_g = _nonfinite_grads_from(ctx, s.steps[onset])
            if bad_g:
                values.update(grad_non_finite=bad_g, grad_points=all_g)
                template += "; {grad_non_finite} of {grad_points} gradient norms from that step are non-finite"
                message = ("A loss logged as exactly 0.0 while the gradient norms are non-finite is consistent with a "
                           "non-finite loss being masked before logging (HF Trainer's logging_nan_inf_filter), not "
                           "with convergence. Treat the run as having produced NaN/Inf losses from this step.")
            else:
                message = ("The loss dropped to exactly zero and stayed there. Real losses rarely reach exactly 0.0: "
                           "check for masked labels, an empty batch source, or a masked non-finite loss.")
            f = Finding(TP_ZERO_LOSS_ONSET.id, TP_ZERO_LOSS_ONSET.level, message, Evidence(values, template),
                        ctx.point(s, onset), s.label, s.key, marks={onset: "first-zero", last_pos: "last-positive"})
            f.related.append(Related("last-positive", ctx.point(s, last_pos), "last positive loss"))
            res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, zero_losses, "train-loss")


@check("flat-loss", TP_FLAT, order=50, description="relative variation of the loss",
       thresholds=("min_loss_variation", "min_points_for_degenerate_check"))
def check_flat(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def flat_loss(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_points_for_degenerate_check, why="one record is not a flat curve")):
            return skip
        if (skip := too_early(ctx, s, len(vals))) is not None:
            return skip
        st = stats(s)
        mean = st.mean
        if mean <= 0:
            return SkipReason(Skip.DEGENERATE, "the mean loss is not positive, so its relative variation is undefined")
        cv = math.sqrt(max(0.0, st.m2) / st.count_fin) / mean
        values = {"series": s.label, "cv": Ratio(cv), "points": len(vals), "mean": mean,
                  "threshold": th.min_loss_variation}
        res.measurements.append(Measurement("flat-loss", s.label, values,
                                            f"variation {cv:.3g} over {len(vals)} points"))
        if cv < th.min_loss_variation:
            ev = Evidence(values, "{series}: coefficient of variation {cv} over {points} points (mean {mean}) is "
                                  "below {threshold}")
            f = Finding(TP_FLAT.id, TP_FLAT.level,
                        "The loss barely moves: the model may not be updating (learning rate zero, frozen "
                        "parameters) or the loss may sit at chance level (ln(classes)).",
                        ev, ctx.point(s, idx[-1]), s.label, s.key, marks={idx[0]: "first", idx[-1]: "last"})
            f.related.append(Related("first", ctx.point(s, idx[0]), "first value of the flat stretch"))
            res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, flat_loss, "train-loss", trend=True)


def _constant_tail(vals: list[float], tol: float) -> int:
    """How many values end ``vals`` within ``tol`` of the last one, relative: (max - min) <= tol * |last|. Walks
    back from the end by index (a slice copied the whole series at every re-judge): O(the tail)."""
    last = vals[-1]
    lo = hi = last
    k = 1
    for j in range(len(vals) - 2, -1, -1):
        v = vals[j]
        lo, hi = min(lo, v), max(hi, v)
        if hi - lo > tol * abs(last):
            break
        k += 1
    return k


def _printed_resolution(ctx: Context, s: Series, points: list[int]) -> float | None:
    """The coarsest relative resolution the values at ``points`` are printed with: half a unit of the last printed
    digit over the value (`0.24430938`: 2e-8; `0.3557`: 1.4e-4). A binary record holds the float itself (0). None
    when a value's text cannot be found on its line: its precision is unknown."""
    worst = 0.0
    for i in points:
        if (toks := _printed(ctx, s, i)) is None:
            continue
        found = None
        for tok in toks:
            try:
                exp = Decimal(tok).as_tuple().exponent
            except InvalidOperation:
                continue
            if isinstance(exp, int):
                res = 0.5 * 10.0 ** exp / abs(s.values[i])
                found = res if found is None else min(found, res)
        if found is None:
            return None
        worst = max(worst, found)
    return worst


def _noise_before(vals: list[float], end: int) -> tuple[float, int]:
    """The per-point log noise of ``vals[:end]`` (rules/noise.py), the constant tail's first value the last of them
    (the change into it is the last change the loss made), or the mean absolute log change when fewer than 4 changes
    precede (a tail from the second epoch on): (sigma, changes)."""
    sigma, n = log_noise(vals, 0, end)
    if n >= 4 or math.isfinite(sigma):
        return sigma, n
    logs = [math.log(v) for v in vals[:end] if v > 0]
    d = [abs(b - a) for a, b in itertools.pairwise(logs)]
    return (sum(d) / len(d), len(d)) if d else (math.nan, 0)


@check("flat-onset", TP_FLAT_ONSET, order=51, description="a loss constant from a step after varying",
       thresholds=("min_constant_tail", "constant_tail_rel_tol", "constant_tail_noise_ratio"))
def check_flat_onset(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def flat_from(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_constant_tail + 1, why="a constant tail needs a value before it")):
            return skip
        k = _constant_tail(vals, th.constant_tail_rel_tol)
        res.measurements.append(Measurement("flat-onset", s.label, {"constant_tail": k},
                                            f"ends in {k} values equal within {th.constant_tail_rel_tol:g}"))
        if k < th.min_constant_tail or k == len(vals):
            return None  # no constant tail, or constant throughout: TP-FLAT's domain
        if vals[-1] <= 0:
            why = "an exact-zero tail is TP-ZERO-LOSS-ONSET's" if vals[-1] == 0 else "a negative loss has no log noise"
            return SkipReason(Skip.NOT_APPLICABLE, f"the last {k} values are constant at {fmt_value(vals[-1])}: {why}")
        start = len(vals) - k
        res_rel = _printed_resolution(ctx, s, _sample(list(idx[start:]), _PRECISION_SAMPLE))
        if res_rel is None or res_rel > th.constant_tail_rel_tol:
            shown = "unknown" if res_rel is None else f"{res_rel:.2g} of the value"
            return SkipReason(Skip.NOT_APPLICABLE, f"the last {k} values repeat at the printed precision ({shown}), "
                              f"coarser than {th.constant_tail_rel_tol:g}: a plateau can repeat them")
        sigma, changes = _noise_before(vals, start + 1)
        tail = vals[start:]
        spread = (max(tail) - min(tail)) / abs(vals[-1])
        if not sigma >= th.constant_tail_noise_ratio * th.constant_tail_rel_tol:
            return None  # the loss was not moving before: a convergence to its last digit, not an onset
        onset, before = idx[start], idx[start - 1]
        values = {"series": s.label, "onset_step": Step(s.steps[onset]), "points": k, "value": vals[-1],
                  "spread": Ratio(spread), "tol": th.constant_tail_rel_tol, "noise": Ratio(sigma),
                  "changes": changes, "measure": "log noise" if changes >= 4 else "mean absolute log change",
                  "before": s.values[before], "before_step": Step(s.steps[before])}
        ev = Evidence(values, "{series}: constant from step {onset_step}: the last {points} values equal {value} "
                              "within {spread} of it (tolerance {tol}), after varying by {noise} per point before it "
                              "({measure} of {changes} changes; {before} at step {before_step})")
        f = Finding(TP_FLAT_ONSET.id, TP_FLAT_ONSET.level,
                    "The loss stopped changing at this step and repeats to its printed digits: consistent with "
                    "weights that no longer change (learning rate zero, frozen parameters, zero gradients), not with "
                    "a plateau, whose last digits keep moving.",
                    ev, ctx.point(s, onset), s.label, s.key, marks={onset: "first-constant", before: "last-varying"})
        f.related.append(Related("last-varying", ctx.point(s, before), "last value before the constant stretch"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, flat_from, "train-loss", trend=True)


def _against_noise(ctx: Context, s: Series, vals: list[float], seg: int, w: int, end_win: tuple[int, int],
                   lo_win: tuple[int, int], ratio: float, values: dict[str, Any],
                   text: str) -> tuple[bool | None, str]:
    """Whether the rise is within the series' own noise (None when one point decides: w == 1), with the noise
    measured into ``values`` and ``text``."""
    th = ctx.th
    # Is the rise a level change or the series' noise? Measured against its own noise: the end level's
    # height above the lowest level in level errors (z), which must exceed the chance dip of the lowest of
    # the m windows it was chosen among plus divergence_noise_z; a held-out loss that rose too corroborates.
    noisy = None
    if w > 1:
        sigma, changes = log_noise(vals, seg, len(vals))
        m = max(1, (len(vals) - seg) // w)
        se = level_se(sigma, end_win[1] - end_win[0], lo_win[1] - lo_win[0]) if sigma == sigma else math.nan
        z = z_of(math.log(ratio), se) if se == se else math.inf
        held = _heldout_rise(ctx, s)
        need = th.divergence_noise_z + (0.0 if held is not None else selection(m))
        values.update(sigma=Ratio(sigma) if sigma == sigma else Ratio(0.0), changes=changes, z=Ratio(z),
                      z_need=Ratio(need), windows=m)
        if held is not None:
            values.update(held_series=held[0], held_best=held[1], held_last=held[2], held_ratio=Ratio(held[3]))
        text += f"; {z:.3g} level errors above the lowest level (needs {need:.3g}; noise {sigma:.3g} in log)"
        noisy = z < need
        if ratio <= th.max_loss_divergence_ratio and sigma == sigma:
            # A rise under trainproof's 1.5x stands out only if it does over the noise at its upper bound too: a
            # noise measured from few changes can be measured low (hf-healthy-041's first ten points: 0.0547 from
            # nine changes of a loss that jumps by 0.3 in log at every point).
            hi = noise_upper(sigma, changes)
            z_hi = z_of(math.log(ratio), level_se(hi, end_win[1] - end_win[0], lo_win[1] - lo_win[0]))
            values.update(sigma_upper=Ratio(hi), z_upper=Ratio(z_hi), big=th.max_loss_divergence_ratio)
            text += f"; {z_hi:.3g} over the noise's upper bound {hi:.3g}"
            noisy = noisy or z_hi < need
    return noisy, text


def _heldout_jump(ctx: Context, s: Series, after: float) -> dict[str, Any] | None:
    """A held-out loss of the same run whose last evaluation, at a step after ``after``, is above its best by
    ``overfit_ratio`` and by ``divergence_noise_z`` plus the best's selection among its evaluations over its own
    noise at the upper bound (two single evaluations: sqrt 2 of it): the values naming it, or None. O(1) but the
    noise's bounded span."""
    th = ctx.th
    for h in same_run(ctx.judged(Role.EVAL_LOSS)[0], s.name):
        st = stats(h)
        n = st.count_fin
        if n < 3 or st.fin_best < 0 or st.fin_best == n - 1:
            continue
        vals = st.fin_vals
        best, last, step = vals[st.fin_best], vals[-1], h.steps[st.fin_idx[-1]]
        sigma, changes = log_noise(vals, 0, n)
        if best <= 0 or step <= after or last / best <= th.overfit_ratio or sigma != sigma:
            continue
        hi = noise_upper(sigma, changes)
        z = z_of(math.log(last / best), math.sqrt(2) * hi)
        need = th.divergence_noise_z + selection(n)
        if z >= need:
            return {"held_series": h.label, "held_best": best, "held_last": last, "held_ratio": Ratio(last / best),
                    "held_step": Step(step), "held_sigma_upper": Ratio(hi), "held_z": Ratio(z),
                    "held_need": Ratio(need)}
    return None


def _end_jump(ctx: Context, s: Series, vals: Sequence[float], idx: list[int], seg: int, w: int,
              lo: float, lo_win: tuple[int, int]) -> dict[str, Any] | None:
    """The last point alone far above the lowest level, where the end window's median cannot show it: a loss that
    blew up at the last logged step (an lr ramp's peak, population hf-late-diverge-001: 55.33 after a level of
    3.6) is one point of the window, and the median is that of the points before it. One point is a spike the run
    may recover from, so it counts only when a held-out loss evaluated after the point before it rose beyond its
    own noise too, and the point stands out of the loss's noise at its upper bound by the windowed test's margin
    and above trainproof's one-point ratio (max_loss_divergence_ratio). The values naming it, or None."""
    th = ctx.th
    last = vals[-1]
    if w == 1 or len(vals) - seg < 2 or last / lo <= th.max_loss_divergence_ratio:
        return None
    sigma, changes = log_noise(vals, seg, len(vals) - 1)
    if sigma != sigma:
        return None
    hi = noise_upper(sigma, changes)
    z = z_of(math.log(last / lo), level_se(hi, 1, lo_win[1] - lo_win[0]))
    need = th.divergence_noise_z + selection(max(1, (len(vals) - seg) // w))
    if z < need or (held := _heldout_jump(ctx, s, s.steps[idx[-2]])) is None:
        return None
    return {"last": last, "jump_step": Step(s.steps[idx[-1]]), "jump_ratio": Ratio(last / lo),
            "jump_sigma_upper": Ratio(hi), "jump_z": Ratio(z), "jump_need": Ratio(need), **held}


def _blow_up_left(ctx: Context, s: Series, vals: Sequence[float], idx: list[int], w: int, lo: float,
                  lo_win: tuple[int, int], values: dict[str, Any]) -> dict[str, Any] | None:
    """A rise under divergence_min_ratio, established over the noise, that is what is left of a blow-up: a point
    between the lowest level and the end above max_loss_divergence_ratio x the lowest level and beyond the noise at
    its upper bound by the windowed test's margin. The size guard keeps a healthy warm restart's bump (1.02x, beyond
    the noise of a smooth epoch loss) from firing; a loss that blew up to 6.5x and came back to 1.16x its lowest
    level (population sklearn-diverge-001: the lr multiplied 14,240x) has its size measured by the blow-up. The
    values naming the peak, or None. O(the points after the lowest window), only when such a rise is measured."""
    th = ctx.th
    after = range(lo_win[1], len(vals) - w)
    if w == 1 or not after or "sigma_upper" not in values:
        return None
    k = max(after, key=lambda j: vals[j])
    peak = vals[k]
    z = z_of(math.log(peak / lo), level_se(float(values["sigma_upper"]), 1, lo_win[1] - lo_win[0]))
    if peak / lo <= th.max_loss_divergence_ratio or z < float(values["z_need"]):
        return None
    return {"peak": peak, "peak_step": Step(s.steps[idx[k]]), "peak_ratio": Ratio(peak / lo), "peak_z": Ratio(z),
            "peak_at": idx[k]}


def _beyond_the_window(ctx: Context, s: Series, vals: Sequence[float], idx: list[int], seg: int, w: int,
                       lo: float, lo_win: tuple[int, int], values: dict[str, Any],
                       small: bool) -> tuple[dict[str, Any], str] | None:
    """What fires TP-DIVERGE when the windowed test does not: a blow-up at the last point (``_end_jump``), or a
    small rise beyond the noise (``small``) that is what is left of a blow-up (``_blow_up_left``); with the
    measurement's text."""
    if (jump := _end_jump(ctx, s, vals, idx, seg, w, lo, lo_win)) is not None:
        return jump, (f"; last point {jump['jump_ratio']:.3g}x the lowest level, {jump['jump_z']:.3g} errors of one "
                      f"point (needs {jump['jump_need']:.3g}), {jump['held_series']} {jump['held_ratio']:.3g}x its "
                      "best")
    if small and (peak := _blow_up_left(ctx, s, vals, idx, w, lo, lo_win, values)) is not None:
        return peak, f"; what is left of a blow-up to {peak['peak_ratio']:.3g}x at step {fmt_step(peak['peak_step'])}"
    return None


#: TP-DIVERGE's evidence when a rise under divergence_min_ratio is what is left of a blow-up (``_blow_up_left``)
_PEAK = ("{series}: end level {end} (median of the last {window} points, {unit}s {end_first}-{end_last}) is "
         "{ratio}x the lowest level {minimum} (median of points at {unit}s {min_first}-{min_last}), under the "
         "threshold {threshold}, and what is left of a blow-up: the loss reached {peak} at {unit} {peak_step}, "
         "{peak_ratio}x the lowest level, {peak_z} errors of one point above it; judged over its noise: {z} level "
         "errors above the lowest level, where {z_need} were needed (log-loss noise {sigma}, from the MAD of its last "
         "{changes} point-to-point changes; {z_upper} over its upper bound {sigma_upper})")

#: TP-DIVERGE's evidence when the last point alone rose (``_end_jump``)
_JUMP = ("{series}: last value {last} at {unit} {jump_step} is {jump_ratio}x the lowest level {minimum} (median of "
         "points at {unit}s {min_first}-{min_last}), while the end level {end} (median of the last {window} points) "
         "is {ratio}x it; judged over its noise: {jump_z} errors of one point above the lowest level, where "
         "{jump_need} were needed (log-loss noise at its upper bound {jump_sigma_upper}); corroborated by "
         "{held_series}, whose last evaluation at {unit} {held_step} is {held_last}, {held_ratio}x its best "
         "{held_best}: {held_z} errors of its own noise at the upper bound {held_sigma_upper}, where {held_need} "
         "were needed")


def _divergence_finding(ctx: Context, s: Series, values: dict[str, Any], w: int, descended: bool, idx: list[int],
                        end_win: tuple[int, int], lo_win: tuple[int, int], lo: float, since_seam: int) -> Finding:
    """The TP-DIVERGE finding: on the last point, with the lowest level and the end window as related places."""
    # an epoch-average series counts epochs, not steps: say so (the windows' numbers are epochs)
    unit = "epoch" if s.step_basis == "epoch" else "step"
    if w == 1:
        template = (f"{{series}}: last value {{end}} at {unit} {{end_last}} is {{ratio}}x the minimum {{minimum}} "
                    f"at {unit} {{min_last}} (threshold {{threshold}})")
    elif "jump_z" in values:
        template = _JUMP.replace("{unit}", unit)
    elif "peak_z" in values:
        template = _PEAK.replace("{unit}", unit)
    else:
        template = (f"{{series}}: end level {{end}} (median of the last {{window}} points, {unit}s "
                    f"{{end_first}}-{{end_last}}) is {{ratio}}x the lowest level {{minimum}} (median of points at "
                    f"{unit}s {{min_first}}-{{min_last}}); threshold {{threshold}}; "
                    "last point/minimum {raw_ratio}")
        if descended:  # the rise since the minimum, as a multiple of the descent before it
            template += "; it gave back {giveback}x its descent from the start level {start}"
        template += ("; judged over its noise: {z} level errors above the lowest level, where {z_need} were "
                     "needed (log-loss noise {sigma}, from the MAD of its last {changes} point-to-point changes")
        if "held_series" in values:
            template += "; corroborated by {held_series}, which rose from its best {held_best} to {held_last})"
        else:
            template += "; the lowest of {windows} windows)"
        if "z_upper" in values:
            template += ("; a rise under {big}x must stand out of the noise at its upper bound too (two of its "
                         "standard errors above it, {sigma_upper}): {z_upper} level errors")
    end_i, lo_mid = idx[end_win[1] - 1], idx[(lo_win[0] + lo_win[1] - 1) // 2]
    message = ("The loss ends well above the lowest level it reached: training may have become unstable "
               "(learning rate too high, a bad stretch of data, a precision overflow), or the run kept going "
               "past its best point. Compare with the held-out loss and look at what changed after the minimum.")
    peak_at = int(values.pop("peak_at")) if "peak_at" in values else None  # a position, not a measured value
    if peak_at is not None:
        message += " The end is what is left of a blow-up: the loss has not come back to its lowest level."
    if "jump_z" in values:
        message += (" Only the last point is that high, and the held-out loss evaluated after the point before it "
                    "rose too.")
    level = TP_DIVERGE.level
    early = too_early(ctx, s, since_seam)
    if early is not None:
        # A young live run rises for healthy reasons too (detection losses while the warm-up matches more
        # proposals): yellow now, red only once the run is past its start.
        level = Level.WARN
        message += f" A warning, not a failure, while the run is young: {early.detail}."
    f = Finding(TP_DIVERGE.id, level, message,
                Evidence(values, template), ctx.point(s, end_i), s.label, s.key,
                marks={end_i: "end", lo_mid: "minimum"})
    f.related.append(Related("minimum", ctx.point(s, lo_mid), f"lowest level {fmt_value(lo)}"))
    if w > 1:
        f.related.append(Related("window-start", ctx.point(s, idx[end_win[0]]), "the end window starts here"))
        f.marks[idx[end_win[0]]] = "window-start"
    if peak_at is not None:
        f.related.append(Related("peak", ctx.point(s, peak_at), f"the blow-up: {fmt_value(float(values['peak']))}"))
        f.marks[peak_at] = "peak"
    return f


@check("divergence", TP_DIVERGE, order=60, description="end level vs lowest level of the loss",
       thresholds=("max_loss_divergence_ratio", "divergence_window", "divergence_window_min",
                   "divergence_window_divisor", "divergence_min_windows", "min_points_for_trend",
                   "divergence_noise_z", "divergence_min_ratio"))
def check_divergence(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def diverged(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_points_for_trend)) is not None:
            return skip
        st = stats(s)
        if st.fin_min < 0 or st.fin_min_positive == math.inf:
            return SkipReason(Skip.DEGENERATE, "the loss takes non-positive values, so a ratio to its minimum is "
                              "meaningless")
        min_nonzero = st.fin_min_positive
        raw_ratio = vals[-1] / min_nonzero
        w = th.window_for(len(vals))
        # A run appended to the same log (the step counter went back) is judged from its seam on.
        seg = run_start(s)
        if len(vals) - seg < th.min_points_for_trend:
            return SkipReason(Skip.TOO_FEW, f"{len(vals) - seg} points since the run restarted at step "
                              f"{fmt_step(s.steps[idx[seg]])} (line {s.lines[idx[seg]]}), fewer than "
                              f"{th.min_points_for_trend}")
        if w == 1:
            lo = min(v for v in vals[seg:] if v > 0) if seg else min_nonzero
            lo_i = vals.index(lo, seg)
            lo_win, end, end_win = (lo_i, lo_i + 1), vals[-1], (len(vals) - 1, len(vals))
        else:
            lo, lo_win = lowest_level(s, w, seg)
            end, end_win = median(vals[len(vals) - w:]), (len(vals) - w, len(vals))
            if lo <= 0:
                return SkipReason(Skip.DEGENERATE, "the lowest median level is not positive")
        ratio = end / lo
        # trainproof's ratio for trainproof's test (one point decides); a rise judged over its noise needs its size
        threshold = th.max_loss_divergence_ratio if w == 1 else th.divergence_min_ratio
        # The start the loss descended from: its first value when the lowest level is reached within the first
        # window, else the first window's median (reported as the share of the descent given back).
        start = vals[seg] if lo_win[0] - seg < w else median(vals[seg:seg + w])
        descended = lo_win[0] > seg and start > lo
        giveback = (end - lo) / (start - lo) if descended else math.inf
        given = {"start": start, "giveback": Ratio(giveback)} if descended else {}
        values = {"series": s.label, "end": end, **given,
                  "end_first": Step(s.steps[idx[end_win[0]]]),
                  "end_last": Step(s.steps[idx[end_win[1] - 1]]), "minimum": lo,
                  "min_first": Step(s.steps[idx[lo_win[0]]]), "min_last": Step(s.steps[idx[lo_win[1] - 1]]),
                  "ratio": Ratio(ratio), "threshold": threshold, "window": w,
                  "raw_ratio": Ratio(raw_ratio), "points": len(vals)}
        text = f"end/min {ratio:.3g} over {w}-point medians (last point/min {raw_ratio:.3g})"
        noisy, text = _against_noise(ctx, s, vals, seg, w, end_win, lo_win, ratio, values, text)
        # A rise under trainproof's 1.5x counts from a level the loss descended to, not from the one it started at:
        # a detector's loss starts low while its warm-up matches few proposals (mmdet Ear-Keypoints: 0.425 over
        # steps 1-8, 1.28 at step 76, 0.536 and falling at 85% of the log, 1.26x its start).
        start_low = w > 1 and ratio <= th.max_loss_divergence_ratio and not descended
        if start_low and ratio > threshold:
            text += f"; a rise under {th.max_loss_divergence_ratio:g}x from the level the run started at"
        fires = not (ratio <= threshold or noisy or start_low)
        if not fires and (more := _beyond_the_window(ctx, s, vals, idx, seg, w, lo, lo_win, values,
                                                     small=ratio > 1 and noisy is False and not start_low)):
            values.update(more[0])
            text += more[1]
            fires = True
        res.measurements.append(Measurement("divergence", s.label, values, text))
        if not fires:
            return None
        f = _divergence_finding(ctx, s, values, w, descended, idx, end_win, lo_win, lo, len(vals) - seg)
        res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, diverged, "train-loss", trend=True)


def _dead_run_allowance(s: Series, seg: int, vals: Sequence[float], th: Thresholds,
                        values: dict) -> tuple[float, float]:
    """(the most improvement the line allows within dead_run_noise_z errors, the same without the highest point),
    their measurements added to ``values``."""
    # Not lower than at the start, or only its noise? Two windows of 5 of a per-batch loss are too noisy to
    # say; the whole run is not. The change from start to end of a least-squares line through every log value
    # (kept as running sums: O(appended)) has a standard error of sigma sqrt(12 / n); the run is dead only
    # when even that change plus dead_run_noise_z errors falls short of the required improvement. This
    # replaced two guards: the windows of 5 before the last must not show the improvement either, and a live
    # run whose loss is falling right now is not dead.
    # The noise itself is measured from few changes early in a run (9 for 10 points: its own standard error is
    # about a fifth of it), and a FAIL must hold even if it was measured low: the line's error is taken at the
    # noise's upper bound (two of its own errors above, as TP-DIVERGE does). A healthy per-step loss that rose
    # over its first 10 points (population hf-healthy-025, 7.044 -> 7.697) was a FAIL at 12% of its run.
    sigma, changes = log_noise(vals, 0, len(vals))
    hi = noise_upper(sigma, changes) if sigma == sigma else 0.0
    fit, n_fit = fitted_change(s, seg)
    se = hi * math.sqrt(12 / n_fit) if n_fit > 2 else 0.0
    allowed = 1 - math.exp(-(fit + th.dead_run_noise_z * se)) if n_fit > 2 else 1.0
    # Nor may it rest on one point: a spike that recovers, near the end of a short series, tilts the line (a
    # loss of 1318 among values near 4 made population hf-healthy-034's line "rise" 3.08x). The line without the
    # highest point must fall short too (with its own error over one point fewer).
    fit_lo, n_lo = fitted_change(s, seg, without_highest=True)
    allowed_lo = 1 - math.exp(-(fit_lo + th.dead_run_noise_z * hi * math.sqrt(12 / n_lo))) if n_lo > 2 else 1.0
    values.update(sigma=Ratio(sigma if sigma == sigma else 0.0), sigma_upper=Ratio(hi), changes=changes,
                  allowed=Ratio(allowed), allowed_without_highest=Ratio(allowed_lo),
                  highest=highest_fitted(s, seg),
                  fitted=Ratio(1 - math.exp(-fit) if n_fit > 2 else 0.0), fit_points=n_fit,
                  z_dead=Ratio(th.dead_run_noise_z))
    return allowed, allowed_lo


@check("dead-run", TP_DEAD_RUN, order=70, description="start vs end of the loss",
       thresholds=("loss_improvement_window", "min_points_for_improvement_check", "min_loss_improvement",
                   "dead_run_noise_z"))
def check_dead_run(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th
    k = th.loss_improvement_window

    def stopped_improving(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        seg = run_start(s)  # a run appended to the same log is judged from its seam on
        if seg:
            idx, vals = idx[seg:], vals[seg:]
        if (skip := too_few(len(vals), th.min_points_for_improvement_check,
                            why=f"since the run restarted at step {fmt_step(s.steps[idx[0]])}" if seg else "")):
            return skip
        if (skip := too_early(ctx, s, len(vals))) is not None:
            return skip
        first_step, last_step = s.steps[idx[0]], s.steps[idx[-1]]
        if first_step > 0 and last_step - first_step < 0.5 * last_step:
            return SkipReason(Skip.NOT_APPLICABLE, f"the log starts at step {fmt_step(first_step)} and ends at "
                              f"{fmt_step(last_step)}: it is the tail of a longer run, not its start")
        m0, m1 = upper_median(vals[:k]), upper_median(vals[-k:])
        if m0 <= 0:
            return SkipReason(Skip.DEGENERATE, "the starting loss level is not positive, so improvement is undefined")
        improvement = 1 - m1 / m0
        values = {"series": s.label, "start": m0, "end": m1, "window": k, "improvement": Ratio(improvement),
                  "required": th.min_loss_improvement,
                  "start_last": Step(s.steps[idx[k - 1]]), "end_first": Step(s.steps[idx[-k]])}
        allowed, allowed_lo = _dead_run_allowance(s, seg, vals, th, values)
        sigma = values["sigma"]
        res.measurements.append(Measurement("dead-run", s.label, values,
                                            f"improved {improvement:.3g}; fitted line {values['fitted']:.3g}, at "
                                            f"most {allowed:.3g} within {th.dead_run_noise_z:g} errors (noise "
                                            f"{sigma:.3g} in log)"))
        if m1 < (1 - th.min_loss_improvement) * m0 or max(allowed, allowed_lo) >= th.min_loss_improvement:
            return None
        if (held := _heldout_falling(ctx, s)) is not None:
            # The claim is "the model may not be learning"; a held-out loss falling at every evaluation measures
            # that it is. Not a finding: the measurement says which series settled it.
            label, intervals, first, last = held
            res.measurements.append(Measurement("dead-run", s.label, {**values, "heldout": label},
                                                f"not improved over its noise, but {label} fell at each of "
                                                f"{intervals} evaluations ({first:.4g} to {last:.4g})"))
            return None
        template = ("{series}: median of the last {window} points {end} (from step {end_first}) vs median of the "
                    "first {window} {start} (to step {start_last}): improvement {improvement}, below the required "
                    "{required}; judged over its noise: a line through all {fit_points} log values falls {fitted} "
                    "from start to end, at most {allowed} within {z_dead} standard errors (log-loss noise {sigma}, "
                    "from the MAD of {changes} point-to-point changes; {sigma_upper} at its upper bound); without "
                    "its highest point ({highest}) at most {allowed_without_highest}")
        f = Finding(TP_DEAD_RUN.id, TP_DEAD_RUN.level,
                    "The loss at the end is not lower than at the start: the model may not be learning "
                    "(learning rate zero or far too low, frozen parameters, labels without signal).",
                    Evidence(values, template),
                    ctx.point(s, idx[-1]), s.label, s.key, marks={idx[-1]: "end", idx[0]: "start"})
        f.related.append(Related("start", ctx.point(s, idx[0]), "the start window"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, stopped_improving, "train-loss", trend=True)
