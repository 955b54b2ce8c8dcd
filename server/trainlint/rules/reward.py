"""TL-REWARD-COLLAPSE: a reinforcement-learning reward (or return) that ends far below its best level.

An RL run's losses are objectives that follow the returns (PPO's loss grows with its value loss as the policy
improves), so the loss rules do not judge them (``Context.judged``); what says whether the policy learned is the
reward it earns. A reward rises: the mirror of TP-DIVERGE, on the same windows (``Thresholds.window_for``) and
the same noise measure (rules/noise.py: the robust scale of the log values' point-to-point changes), judges the
end level against the highest level the reward held. Rewards of a healthy run swing by tens of percent between
rollouts; the noise test is what keeps those from being called a collapse.

A WARN, not a FAIL: the log cannot show that the task stayed the same (a curriculum or a harder environment lowers
the reward by design) nor that the run is over for good (exploration schedules make RL curves non-monotone), and
the best policy may be in a checkpoint. The final policy earns less than two thirds of what an earlier one did: a
result worth a look.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..core.model import Role, Series
from ..core.roles import direction, tokens
from ..core.values import fmt_value
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
    too_early,
    too_few,
)
from .noise import level_se, log_noise, selection, z_of
from .registry import check
from .stats import highest_level, run_start, stats

TL_REWARD_COLLAPSE = Rule("TL-REWARD-COLLAPSE", Level.WARN, "reward-collapse",
                          "The reward ends far below its best level")

#: a series of these names is a reward or return an RL run earns ...
REWARD_TOKENS = frozenset({"reward", "rewards", "rew", "return", "returns"})
#: ... unless it is a preference-model term (TRL DPO's rewards/chosen, rewards/rejected and rewards/margins move
#: either way by design), a spread, or an objective
NOT_EARNED = frozenset({"chosen", "rejected", "margin", "margins", "accuracies", "accuracy", "std", "kl", "loss",
                        "losses"})


def reward_series(ctx: Context) -> list[Series]:
    """The series an RL run earns: a name with a reward token, which rises (``roles.direction``), read as OTHER."""
    out = []
    for s in ctx.log.series.values():
        if s.role != Role.OTHER or not len(s):
            continue
        tok = set(tokens(s.name))
        if tok & REWARD_TOKENS and not tok & NOT_EARNED and direction(s.name, s.role) == "rises":
            out.append(s)
    return out


def _nonpositive_from(s: Series, first: int) -> bool:
    """Whether a finite value at index ``first`` or later is <= 0: from the cache's ascending indices of values
    <= 0, walked back from the end (one look, unless -inf values sit there), not a pass over the series."""
    for i in reversed(stats(s).nonpos):
        if i < first:
            return False
        if math.isfinite(s.values[i]):
            return True
    return False


def _measure(ctx: Context, s: Series, idx: Sequence[int], vals: Sequence[float]) -> dict[str, Any] | SkipReason:
    """The end level, the best level, their ratio and the rise's standing in the reward's own noise."""
    th = ctx.th
    seg = run_start(s)
    n = len(vals) - seg
    if (skip := too_few(n, th.min_points_for_trend, why="since the run restarted" if seg else "")) is not None:
        return skip
    if (skip := too_early(ctx, s, n)) is not None:
        return skip
    if _nonpositive_from(s, idx[seg]):
        return SkipReason(Skip.DEGENERATE, "the reward takes non-positive values, so a ratio to its best level is "
                          "undefined")
    w = th.window_for(n)
    best, best_win = highest_level(s, w, seg)
    end_win = (len(vals) - w, len(vals))
    end = median(vals[end_win[0]:])
    ratio = best / end
    sigma, changes = log_noise(vals, seg, len(vals))
    m = max(1, n // w)
    se = level_se(sigma, w, best_win[1] - best_win[0]) if sigma == sigma else math.nan
    z = z_of(math.log(ratio), se) if se == se else 0.0
    need = th.divergence_noise_z + selection(m)
    return {"series": s.label, "end": end, "best": best, "ratio": Ratio(ratio), "threshold": th.reward_collapse_ratio,
            "window": w, "end_first": Step(s.steps[idx[end_win[0]]]), "end_last": Step(s.steps[idx[-1]]),
            "best_first": Step(s.steps[idx[best_win[0]]]), "best_last": Step(s.steps[idx[best_win[1] - 1]]),
            "sigma": Ratio(sigma if sigma == sigma else 0.0), "changes": changes, "z": Ratio(z), "z_need": Ratio(need),
            "windows": m, "_best_mid": idx[(best_win[0] + best_win[1] - 1) // 2], "_end_start": idx[end_win[0]]}


@check("reward-collapse", TL_REWARD_COLLAPSE, order=75, description="end level vs best level of a reward",
       thresholds=("reward_collapse_ratio", "divergence_window", "divergence_window_min", "divergence_window_divisor",
                   "divergence_min_windows", "min_points_for_trend", "divergence_noise_z"))
def check_reward_collapse(ctx: Context) -> CheckResult:
    res = CheckResult()
    series = reward_series(ctx)
    if not series:
        res.skipped = SkipReason(Skip.NO_SERIES, "no reward or return series in the log")
        return res
    for s in series:
        idx, vals = finite(s)
        got = _measure(ctx, s, idx, vals)
        if isinstance(got, SkipReason):
            res.coverage[s.label] = got
            continue
        res.coverage[s.label] = None
        best_mid, end_start = got.pop("_best_mid"), got.pop("_end_start")
        res.measurements.append(Measurement(
            "reward-collapse", s.label, got, f"best/end level {got['ratio']:.3g} over {got['window']}-point medians; "
            f"{got['z']:.3g} level errors (needs {got['z_need']:.3g}; noise {got['sigma']:.3g} in log)"))
        if got["ratio"] > ctx.th.reward_collapse_ratio and got["z"] >= got["z_need"]:
            res.findings.append(_finding(ctx, s, got, idx[-1], best_mid, end_start))
    if all(r is not None for r in res.coverage.values()):
        res.skipped = SkipReason(Skip.DEGENERATE, "; ".join(f"{k}: {v.detail}" for k, v in res.coverage.items() if v))
    return res


def _finding(ctx: Context, s: Series, values: dict[str, Any], last: int, best_mid: int, end_start: int) -> Finding:
    """The finding on the last point; the best level and the start of the end window are related places."""
    template = ("{series}: end level {end} (median of the last {window} points, steps {end_first}-{end_last}) is "
                "{ratio}x below the best level {best} (median of points at steps {best_first}-{best_last}); "
                "threshold {threshold}; judged over its noise: {z} level errors below the best level, where {z_need} "
                "were needed (log-reward noise {sigma}, from the MAD of its last {changes} point-to-point changes; "
                "the highest of {windows} windows)")
    f = Finding(TL_REWARD_COLLAPSE.id, TL_REWARD_COLLAPSE.level,
                "The reward ends far below the best level it reached and stays there: the final policy earns less "
                "than an earlier one did (a policy that collapsed onto a few actions, a learning rate too high for "
                "the updates, or a change of the task the log does not show). Compare with the policy entropy and "
                "the checkpoint at the best level.",
                Evidence(values, template), ctx.point(s, last), s.label, s.key,
                marks={last: "end", best_mid: "best", end_start: "window-start"})
    f.related.append(Related("best", ctx.point(s, best_mid), f"best level {fmt_value(values['best'])}"))
    f.related.append(Related("window-start", ctx.point(s, end_start), "the end window starts here"))
    return f
