"""The loss-level family: TP-ZERO-LOSS, TP-ZERO-LOSS-ONSET, TP-FLAT, TP-DIVERGE, TP-DEAD-RUN.

Each judges every train-loss series on its own. TP-DIVERGE compares the *level* at the end
with the lowest *level* the loss held, both medians over a window, so one noisy batch at either
place cannot decide it; a window of 1 reproduces trainproof's last-point-versus-minimum test.
"""

from __future__ import annotations

import math

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
    is_live,
    median,
    per_series,
    too_early,
    too_few,
    upper_median,
)
from .stats import lowest_level, lowest_window, run_start, stats

TP_ZERO_LOSS = Rule("TP-ZERO-LOSS", Level.FAIL, "zero-loss", "Every loss value is exactly zero")
TP_ZERO_LOSS_ONSET = Rule("TP-ZERO-LOSS-ONSET", Level.FAIL, "zero-loss", "The loss ends in a run of exact zeros")
TP_FLAT = Rule("TP-FLAT", Level.FAIL, "flat-loss", "The loss does not vary")
TP_DIVERGE = Rule("TP-DIVERGE", Level.FAIL, "divergence", "The loss ends far above its lowest level")
TP_DEAD_RUN = Rule("TP-DEAD-RUN", Level.FAIL, "dead-run", "The loss did not improve from start to end")


def _nonfinite_grads_from(ctx: Context, step: float) -> tuple[int, int]:
    grads, _ = ctx.judged(Role.GRAD_NORM)
    vals = [v for s in grads for x, v in zip(s.steps, s.values, strict=True) if x >= step]
    return sum(1 for v in vals if not math.isfinite(v)), len(vals)


def check_zero_loss(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def one(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if (skip := too_few(len(vals), th.min_points_for_degenerate_check)) is not None:
            return skip
        st = stats(s)
        if st.mean == 0.0 and st.m2 == 0.0 and vals[0] == 0.0:
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

    return per_series(ctx, Role.TRAIN_LOSS, res, one, "train-loss")


def check_flat(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def one(s: Series) -> SkipReason | None:
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

    return per_series(ctx, Role.TRAIN_LOSS, res, one, "train-loss", trend=True)


def check_divergence(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def one(s: Series) -> SkipReason | None:
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
            lo, lo_win = lowest_level(s, w) if seg == 0 else lowest_window(vals, w, seg)
            end, end_win = median(vals[len(vals) - w:]), (len(vals) - w, len(vals))
            if lo <= 0:
                return SkipReason(Skip.DEGENERATE, "the lowest median level is not positive")
        ratio = end / lo
        # The start the loss descended from: its first value when the lowest level is reached within the first
        # window, else the first window's median. No descent when the lowest level is the start itself.
        start = vals[seg] if lo_win[0] - seg < w else median(vals[seg:seg + w])
        descended = lo_win[0] > seg and start > lo
        giveback = (end - lo) / (start - lo) if descended else math.inf
        # No single point decides: most of the end window must lie above most of the lowest window.
        end_sorted, lo_sorted = sorted(vals[end_win[0]:end_win[1]]), sorted(vals[lo_win[0]:lo_win[1]])
        end_q1, lo_q3 = end_sorted[len(end_sorted) // 4], lo_sorted[(3 * len(lo_sorted)) // 4]
        given = {"start": start, "giveback": Ratio(giveback)} if descended else {}
        values = {"series": s.label, "end": end, **given,
                  "end_first": Step(s.steps[idx[end_win[0]]]),
                  "end_last": Step(s.steps[idx[end_win[1] - 1]]), "minimum": lo,
                  "min_first": Step(s.steps[idx[lo_win[0]]]), "min_last": Step(s.steps[idx[lo_win[1] - 1]]),
                  "ratio": Ratio(ratio), "threshold": th.max_loss_divergence_ratio, "window": w,
                  "raw_ratio": Ratio(raw_ratio), "points": len(vals)}
        text = f"end/min {ratio:.3g} over {w}-point medians (last point/min {raw_ratio:.3g})"
        overlap = end_q1 <= lo_q3
        # ... and not one window either: the window before the end must sit above the threshold too. A noisy
        # per-batch loss lifts one window of 5 by half now and then while it falls (fixtures/live/fp16-healthy).
        before = median(vals[len(vals) - 2 * w:len(vals) - w]) if w > 1 and len(vals) - seg >= 2 * w else None
        one_window = before is not None and before <= th.max_loss_divergence_ratio * lo
        if ratio > th.max_loss_divergence_ratio and overlap:
            text += (f"; the windows overlap (end lower quartile {fmt_value(end_q1)} <= lowest upper quartile "
                     f"{fmt_value(lo_q3)}): noise, not a level change")
        elif ratio > th.max_loss_divergence_ratio and one_window:
            text += (f"; the window before it is at {before / lo:.3g}x the lowest level: one window does not "
                     "decide")
        elif ratio > th.max_loss_divergence_ratio and giveback < th.min_divergence_giveback:
            text += (f"; it gave back only {giveback:.2g} of its descent from {fmt_value(start)}: the noise of a "
                     "converged loss")
        res.measurements.append(Measurement("divergence", s.label, values, text))
        if ratio <= th.max_loss_divergence_ratio or overlap or one_window or giveback < th.min_divergence_giveback:
            return None
        # an epoch-average series counts epochs, not steps: say so (the windows' numbers are epochs)
        unit = "epoch" if s.step_basis == "epoch" else "step"
        if w == 1:
            template = (f"{{series}}: last value {{end}} at {unit} {{end_last}} is {{ratio}}x the minimum {{minimum}} "
                        f"at {unit} {{min_last}} (threshold {{threshold}})")
        else:
            template = (f"{{series}}: end level {{end}} (median of the last {{window}} points, {unit}s "
                        f"{{end_first}}-{{end_last}}) is {{ratio}}x the lowest level {{minimum}} (median of points at "
                        f"{unit}s {{min_first}}-{{min_last}}); threshold {{threshold}}; "
                        "last point/minimum {raw_ratio}")
            if descended:  # the rise since the minimum, as a multiple of the descent before it
                template += "; it gave back {giveback}x its descent from the start level {start}"
        end_i, lo_mid = idx[end_win[1] - 1], idx[(lo_win[0] + lo_win[1] - 1) // 2]
        message = ("The loss ends well above the lowest level it reached: training may have become unstable "
                   "(learning rate too high, a bad stretch of data, a precision overflow), or the run kept going "
                   "past its best point. Compare with the held-out loss and look at what changed after the minimum.")
        level = TP_DIVERGE.level
        early = too_early(ctx, s, len(vals) - seg)
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
        res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, one, "train-loss", trend=True)


def check_dead_run(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th
    k = th.loss_improvement_window

    def one(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        seg = run_start(s)  # a run appended to the same log is judged from its seam on
        if seg:
            idx, vals = idx[seg:], vals[seg:]
        if (skip := too_few(len(vals), th.min_points_for_improvement_check,
                            why=f"since the run restarted at step {fmt_step(s.steps[idx[0]])}" if seg else "")):
            return skip
        if (skip := too_early(ctx, s, len(vals))) is not None:
            return skip
        w = th.window_for(len(vals))
        if is_live(ctx) and len(vals) >= 3 * w:
            now_level, before = median(vals[-w:]), median(vals[-3 * w:-2 * w])
            if now_level < before:  # a live run whose loss is falling right now is not dead
                return SkipReason(Skip.TOO_EARLY, f"the run is still being written and its loss is falling: "
                                  f"{fmt_value(before)} to {fmt_value(now_level)} over its last {3 * w} points")
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
        res.measurements.append(Measurement("dead-run", s.label, values, f"improved {improvement:.3g}"))
        if m1 < (1 - th.min_loss_improvement) * m0:
            return None
        # No single window decides: the windows of k points before the last one (as many as fit, up to
        # dead_run_windows in all) must not show the improvement either. A noisy per-batch loss puts one window of
        # 5 above the start now and then while it falls (fixtures/live/fp16-healthy at 44, 76, 108, 140 points).
        earlier = [upper_median(vals[len(vals) - (j + 1) * k:len(vals) - j * k])
                   for j in range(1, th.dead_run_windows) if len(vals) - (j + 1) * k >= k]
        best = max((1 - m / m0 for m in earlier), default=None)
        if best is not None and best >= th.min_loss_improvement:
            res.measurements[-1] = Measurement("dead-run", s.label, values | {"earlier_best": Ratio(best)},
                                               f"improved {improvement:.3g} in the last window, {best:.3g} in one "
                                               f"of the {len(earlier)} before it")
            return None
        template = ("{series}: median of the last {window} points {end} (from step {end_first}) vs median of the "
                    "first {window} {start} (to step {start_last}): improvement {improvement}, below the required "
                    "{required}")
        if earlier:
            values.update(earlier=len(earlier), earlier_best=Ratio(best))
            template += "; in the {earlier} windows of {window} before it, at most {earlier_best}"
        f = Finding(TP_DEAD_RUN.id, TP_DEAD_RUN.level,
                    "The loss at the end is not lower than at the start: the model may not be learning "
                    "(learning rate zero or far too low, frozen parameters, labels without signal).",
                    Evidence(values, template),
                    ctx.point(s, idx[-1]), s.label, s.key, marks={idx[-1]: "end", idx[0]: "start"})
        f.related.append(Related("start", ctx.point(s, idx[0]), "the start window"))
        res.findings.append(f)
        return None

    return per_series(ctx, Role.TRAIN_LOSS, res, one, "train-loss", trend=True)


CHECKS = (
    Check("zero-loss", (TP_ZERO_LOSS, TP_ZERO_LOSS_ONSET), check_zero_loss, "exact-zero losses"),
    Check("flat-loss", (TP_FLAT,), check_flat, "relative variation of the loss"),
    Check("divergence", (TP_DIVERGE,), check_divergence, "end level vs lowest level of the loss"),
    Check("dead-run", (TP_DEAD_RUN,), check_dead_run, "start vs end of the loss"),
)
