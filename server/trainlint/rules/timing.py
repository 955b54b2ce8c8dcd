"""TP-STEP-CLIFF, TP-LOADER-BOUND, TP-THROUGHPUT and TP-GPU-UTIL: how fast the run went."""

from __future__ import annotations

import bisect
import itertools
import math
from array import array
from collections.abc import Sequence

from ..core.accel import CSTATS
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
    per_series,
    too_few,
    upper_median,
)
from .noise import level_se, log_noise, z_of
from .registry import check
from .stats import SortedWindow, stats, window

TP_STEP_CLIFF = Rule("TP-STEP-CLIFF", Level.WARN, "step-time", "Recent steps are much slower than early ones")
TP_LOADER_BOUND = Rule("TP-LOADER-BOUND", Level.WARN, "loader", "Data loading takes most of each step")
TP_THROUGHPUT = Rule("TP-THROUGHPUT", Level.INFO, "throughput", "Steps per second over the log")
TP_GPU_UTIL = Rule("TP-GPU-UTIL", Level.INFO, "gpu-util", "Median GPU utilisation")


@check("step-time", TP_STEP_CLIFF, order=140, description="recent vs early step time",
       thresholds=("step_time_cliff_ratio", "min_points_for_step_cliff", "divergence_noise_z"))
def check_step_cliff(ctx: Context) -> CheckResult:
    res = CheckResult()
    th = ctx.th

    def step_time_cliff(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        n = len(vals)
        if (skip := too_few(n, th.min_points_for_step_cliff, "finite step times")) is not None:
            return skip
        early_n, recent_n = n // 2, max(1, n // 5)
        e = window(s, "step-cliff-early", 0, early_n).upper_median()
        r = window(s, "step-cliff-recent", n - recent_n, n).upper_median()
        if e <= 0:
            return SkipReason(Skip.DEGENERATE, "the early median step time is not positive")
        values = {"series": s.label, "recent": r, "recent_points": recent_n, "early": e, "early_points": early_n,
                  "ratio": Ratio(r / e), "threshold": th.step_time_cliff_ratio,
                  "from_step": Step(s.steps[idx[n - recent_n]])}
        res.measurements.append(Measurement("step-time", s.label, values, f"recent/early {r / e:.3g}"))
        if r <= th.step_time_cliff_ratio * e:
            return None
        first = idx[n - recent_n]
        f = Finding(TP_STEP_CLIFF.id, TP_STEP_CLIFF.level,
                    "Steps became much slower late in the log: thermal throttling, a slower data source, memory "
                    "pressure (swapping), or another job on the same device.",
                    Evidence(values, "{series}: median of the last {recent_points} step times {recent} (from step "
                                     "{from_step}) is {ratio}x the median of the first {early_points} ({early}); "
                                     "threshold {threshold}"),
                    ctx.point(s, first), s.label, s.key, marks={first: "window-start"})
        f.related.append(Related("early", ctx.point(s, idx[0]), "early step times"))
        res.findings.append(f)
        return None

    per_series(ctx, Role.STEP_TIME, res, step_time_cliff, "step-time")
    if res.skipped is not None and res.skipped.reason == Skip.NO_SERIES:
        _wall_step_cliff(ctx, res)
    return res


#: the fewest intervals the recent window of wall-clock step times must hold: a median of fewer is one slow
#: stretch of a few intervals (the machine busy for a moment), not the steps having become slow
WALL_RECENT_MIN = 5


#: the fewest points a walk of wall-clock intervals hands to the compiled loop: a re-judge's few appended points
#: stay in Python, where copying the held-out steps for C would cost more than the walk
WALK_COMPILED = 256


class _WallIntervals:
    """Seconds per step between consecutive points of a series that carry a wall-clock time (index of the later
    point, seconds over steps): the step time a log without a step-time series still measures (an event file's
    wall_time, a CSV's elapsed-time column). An interval whose ends hold an evaluation step is left out: it
    measures the evaluation too. Kept in the series' cache: each judge walks only the points appended
    since the last, and the medians' windows slide (a re-judge rebuilt every interval and sorted both windows:
    6.8 ms at 1 MB, 55.6 ms at 10 MB of an event file). Evaluations only ever add exclusions, so a held-out step
    that arrives later drops the kept intervals holding it (the last one or two, as evaluations are logged at
    the step just trained) and nothing else changes. A held-out series that was rewritten or is no longer judged
    asks for a fresh walk (``current`` false)."""

    def __init__(self) -> None:
        self.pos = 0                                  # next point of the series to walk
        self.prev: tuple[float, float] | None = None  # (step, wall) of the last timed point walked
        self.evals: list[float] = []                  # held-out steps, sorted
        self.seen: dict[int, tuple[Series, object, int]] = {}  # id -> (held-out series, its cache, steps read)
        # Kept intervals, as arrays (8 bytes each: they stay in the series' cache, and lists of int and float
        # objects raised the server's RSS for 2,000 stopped runs from 114 to 158 MB):
        self.idx = array("q")                         # index of the later point,
        self.start = array("d")                       # step of the earlier one,
        self.per_step = array("d")                    # seconds per step
        self.early = SortedWindow()
        self.recent = SortedWindow()

    def current(self, held_out: Sequence[Series]) -> bool:
        """Whether the held-out series read so far are the same objects, grown only."""
        ids = {id(h): h for h in held_out}
        return all(k in ids and stats(h) is st and len(h.steps) >= n for k, (h, st, n) in self.seen.items())

    def update(self, s: Series, held_out: Sequence[Series]) -> None:
        added: list[float] = []
        for h in held_out:
            _, _, n = self.seen.get(id(h), (h, None, 0))
            added.extend(h.steps[n:])
            self.seen[id(h)] = (h, stats(h), len(h.steps))
        for x in added:
            bisect.insort(self.evals, x)
        for x in added:
            self._drop_holding(x, s)
        evals, steps, walls = self.evals, s.steps, s.walls
        end = min(len(steps), len(walls))
        if CSTATS is not None and end - self.pos >= WALK_COMPILED:  # the loop below, compiled
            self.prev = CSTATS.wall_walk(steps, walls, self.pos, end, self.prev, array("d", evals), self.idx,
                                         self.start, self.per_step)
            self.pos = end
        for i in range(self.pos, end):
            step, wall = steps[i], walls[i]
            if not math.isfinite(wall):
                continue
            prev = self.prev
            if prev is not None and step > prev[0] and wall >= prev[1]:
                k = bisect.bisect_left(evals, prev[0])
                if k == len(evals) or evals[k] > step:
                    self.idx.append(i)
                    self.start.append(prev[0])
                    self.per_step.append((wall - prev[1]) / (step - prev[0]))
            self.prev = (step, wall)
        self.pos = max(self.pos, min(len(steps), len(walls)))

    def _drop_holding(self, x: float, s: Series) -> None:
        """Leave out the kept intervals whose ends hold the held-out step ``x``: the windows first give back
        the positions from the first one dropped on (their values are still in place), then slide on later."""
        steps = s.steps
        k = bisect.bisect_left(self.idx, x, key=steps.__getitem__)  # the first kept interval ending at or after x
        drop = [j for j in range(k, min(k + 2, len(self.idx))) if self.start[j] <= x <= steps[self.idx[j]]]
        if not drop:
            return
        for name in ("early", "recent"):
            w = getattr(self, name)
            if w.a >= drop[0]:
                setattr(self, name, SortedWindow())  # rebuilt from its slice at the next move
                continue
            for j in range(drop[0], w.b):
                w.items.remove(self.per_step[j])
            w.b = min(w.b, drop[0])
        for j in reversed(drop):
            del self.idx[j], self.start[j], self.per_step[j]


def wall_intervals(s: Series, held_out: Sequence[Series]) -> _WallIntervals:
    """The kept wall-clock intervals of ``s``, up to date with its points and ``held_out``'s steps."""
    memo = stats(s).memo
    w = memo.get("wall-intervals")
    if not isinstance(w, _WallIntervals) or not w.current(held_out):
        w = memo["wall-intervals"] = _WallIntervals()
    w.update(s, held_out)
    return w


def _wall_step_cliff(ctx: Context, res: CheckResult) -> None:
    """TP-STEP-CLIFF on the train loss's wall-clock times when the log has no step-time series: the same medians
    (first half, last fifth) and threshold over the seconds per step between its logged points, leaving out the
    intervals that hold an evaluation."""
    th = ctx.th
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    timed = [s for s in train if stats(s).wall_count >= 2]
    if not timed:
        return
    s = max(timed, key=len)
    held_out, _ = ctx.judged(Role.EVAL_LOSS)
    wi = wall_intervals(s, held_out)
    idx, per_step = wi.idx, wi.per_step
    n = len(per_step)
    label = f"{s.label} (wall-clock s/step)"
    if (skip := too_few(n, th.min_points_for_step_cliff, "intervals between timed points")) is not None:
        res.coverage[label] = skip
        res.skipped = skip
        return
    early_n, recent_n = n // 2, max(1, n // 5)
    wi.early.move(per_step, 0, early_n)
    wi.recent.move(per_step, n - recent_n, n)
    e, r = wi.early.upper_median(), wi.recent.upper_median()
    res.coverage[label] = None
    res.skipped = None
    if e <= 0:
        res.coverage[label] = res.skipped = SkipReason(Skip.DEGENERATE, "no time elapsed over the early steps")
        return
    first = idx[n - recent_n]
    # Intervals between logged points jitter far more than a logged step time (a 2-step interval of a
    # millisecond step, a CSV's 0.1 ms clock, another process on the machine): medians of a few such intervals
    # differ 4x in a healthy run. The rise must also stand out of the early intervals' own noise (rules/noise.py:
    # the difference of the two medians' log levels in level errors), by divergence_noise_z, and the recent
    # median must exceed the slowest early interval (jitter with two modes has a large noise and a median that
    # flips between them: slower than all early intervals is not a mode of the same jitter).
    sigma, _ = log_noise(per_step, 0, early_n)
    slowest = wi.early.items[-1]
    z = z_of(math.log(r / e), level_se(sigma, early_n, recent_n)) if r > 0 and math.isfinite(sigma) else 0.0
    values = {"series": s.label, "recent": r, "recent_points": recent_n, "early": e,
              "early_points": early_n, "ratio": Ratio(r / e), "threshold": th.step_time_cliff_ratio,
              "from_step": Step(s.steps[first]), "z": Ratio(z), "z_needed": th.divergence_noise_z,
              "slowest": slowest}
    res.measurements.append(Measurement("step-time", label, values, f"recent/early {r / e:.3g}, {z:.3g} level errors"))
    if r <= th.step_time_cliff_ratio * e or z <= th.divergence_noise_z or r <= slowest or recent_n < WALL_RECENT_MIN:
        return
    f = Finding(TP_STEP_CLIFF.id, TP_STEP_CLIFF.level,
                "Steps became much slower late in the log: a slower data source, thermal throttling, memory "
                "pressure (swapping), or another job on the same device.",
                Evidence(values, "{series}: median seconds per step between its last {recent_points} timed points "
                                 "{recent} (from step {from_step}) is {ratio}x the median of the first "
                                 "{early_points} intervals ({early}; slowest {slowest}); threshold {threshold}; {z} "
                                 "level errors of the intervals' noise (needs {z_needed})"),
                ctx.point(s, first), s.label, s.key, marks={first: "window-start"})
    f.related.append(Related("early", ctx.point(s, idx[0]), "early step times"))
    res.findings.append(f)


class _LoaderShares:
    """Loader time over step time at each step both were logged, followed as both series grow. Steps that
    only go up are paired by a merge: a position in the step-time series that only moves forward (a queue of
    the step times ahead of it held every one as a Python tuple, 350 MB at the peak of judging a 1 GB Coqui
    log); otherwise by a table of them."""

    def __init__(self, step_stats: object, merge: bool) -> None:
        self.step_stats = step_stats   # the step-time series' cache these shares were made against
        self.merge = merge
        self.pos = 0                   # merge: the step-time point at or past the last loader step
        self.by_step: dict[float, float] = {}             # table: every positive step time by step
        self.max_step = -math.inf      # the largest step of a step-time point taken
        self.step_n = 0                # step-time points taken
        self.loader_n = 0              # loader points looked at
        self.waiting: list[int] = []   # loader points whose step is past every step time taken so far
        self.last = -1                 # the last loader point with a share
        self.fractions = array("d")
        self.sorted = SortedWindow()


def loader_shares(ld: Series, st: Series, table: bool = False) -> _LoaderShares:
    """The shares of ``ld`` in ``st``, extended over the points added since the last judge; made again from
    the start when a step time arrives for a step at or before one already taken (a duplicate, a restart)
    or, while merging, when the loader's steps go back."""
    memo = stats(ld).memo
    key = ("loader", st.key)
    sh = memo.get(key)
    merge = not table and stats(ld).first_back is None and stats(st).first_back is None
    if (table or not isinstance(sh, _LoaderShares) or sh.step_stats is not stats(st) or len(ld) < sh.loader_n
            or (sh.merge and not merge)):
        sh = memo[key] = _LoaderShares(stats(st), merge)
    for x, v in zip(st.steps[sh.step_n:], st.values[sh.step_n:], strict=True):
        if x <= sh.max_step and (sh.loader_n or sh.merge):  # a step time logged again: pair by table
            return loader_shares(ld, st, table=True)
        if not sh.merge and math.isfinite(v) and v > 0:
            sh.by_step[x] = v
        sh.max_step = max(sh.max_step, x)
    sh.step_n = len(st)
    todo, sh.waiting = itertools.chain(sh.waiting, range(sh.loader_n, len(ld))), []
    by_step, st_steps, st_vals = sh.by_step, st.steps, st.values
    for i in todo:
        x, v = ld.steps[i], ld.values[i]
        if x > sh.max_step:
            sh.waiting.append(i)
            continue
        if sh.merge:
            p = sh.pos  # past step times no loader point can pair with any more, and those not positive
            while p < sh.step_n and (st_steps[p] < x or not (math.isfinite(st_vals[p]) and st_vals[p] > 0)):
                p += 1
            sh.pos = p
            t = st_vals[p] if p < sh.step_n and st_steps[p] == x else None
        else:
            t = by_step.get(x)
        if t is not None and math.isfinite(v):
            sh.fractions.append(v / t)
            sh.last = max(sh.last, i)
    sh.loader_n = len(ld)
    return sh


@check("loader", TP_LOADER_BOUND, order=150, description="loader time as a share of step time",
       thresholds=("loader_fraction_max",))
def check_loader(ctx: Context) -> CheckResult:
    res = CheckResult()
    loaders, _ = ctx.judged(Role.LOADER_TIME)
    steps, _ = ctx.judged(Role.STEP_TIME)
    pairs = [(ld, st) for ld in loaders for st in steps if ld.aggregation == st.aggregation]
    if not pairs:
        res.skipped = SkipReason(Skip.NO_SERIES, "no loader-time and step-time series logged side by side")
        return res
    for ld, st in pairs:
        share = loader_shares(ld, st)
        label = f"{ld.label} / {st.label}"
        if not share.fractions:
            res.coverage[label] = SkipReason(Skip.DEGENERATE, "no step with both times and a positive step time")
            continue
        res.coverage[label] = None
        share.sorted.move(share.fractions, 0, len(share.fractions))
        med = share.sorted.upper_median()
        values = {"loader": ld.label, "step": st.label, "percent": Ratio(100 * med), "points": len(share.fractions),
                  "threshold": Ratio(100 * ctx.th.loader_fraction_max)}
        res.measurements.append(Measurement("loader", label, values, f"median loader share {100 * med:.3g}%"))
        if med <= ctx.th.loader_fraction_max:
            continue
        last = share.last
        res.findings.append(Finding(
            TP_LOADER_BOUND.id, TP_LOADER_BOUND.level,
            "Most of each step is spent waiting for data: the accelerator idles. More loader workers, faster "
            "storage, or pre-processing ahead of time would speed the run up.",
            Evidence(values, "{loader} is a median {percent}% of {step} over {points} steps (threshold {threshold}%)"),
            ctx.point(ld, last), ld.label, ld.key, marks={last: "end"}))
    if all(v is not None for v in res.coverage.values()):
        res.skipped = SkipReason(Skip.DEGENERATE, "no usable pair of loader and step times")
    return res


@check("throughput", TP_THROUGHPUT, order=230, description="steps per second (context)")
def check_throughput(ctx: Context) -> CheckResult:
    res = CheckResult()
    train, _ = ctx.judged(Role.TRAIN_LOSS)
    timed = [s for s in train if stats(s).wall_count >= 2]
    if not timed:
        res.skipped = SkipReason(Skip.NO_SERIES, "no train-loss series with wall-clock times")
        return res
    s = max(timed, key=len)
    a, b = stats(s).wall_first, stats(s).wall_last
    dt, ds = s.walls[b] - s.walls[a], s.steps[b] - s.steps[a]
    res.coverage[s.label] = None
    if dt <= 0 or ds <= 0:
        res.coverage[s.label] = SkipReason(Skip.DEGENERATE, "no time or no steps elapsed between first and last point")
        res.skipped = res.coverage[s.label]
        return res
    unit = "epochs" if s.step_basis == "epoch" else "steps"
    values = {"series": s.label, "rate": Ratio(ds / dt), "seconds": round(dt, 1), "first": Step(s.steps[a]),
              "last": Step(s.steps[b])}
    res.measurements.append(Measurement("throughput", s.label, values, f"{ds / dt:.3g} {unit}/s"))
    res.findings.append(Finding(
        TP_THROUGHPUT.id, TP_THROUGHPUT.level, "Average speed over the log, for context; it says nothing about "
        "slow stretches in between.",
        Evidence(values, "{series}: {rate} " + unit + "/s from " + unit[:-1] + " {first} to {last} over {seconds} s"),
        ctx.point(s, b), s.label, s.key))
    return res


@check("gpu-util", TP_GPU_UTIL, order=240, description="median GPU utilisation (context)")
def check_gpu_util(ctx: Context) -> CheckResult:
    res = CheckResult()

    def gpu_utilisation(s: Series) -> SkipReason | None:
        idx, vals = finite(s)
        if not vals:
            return SkipReason(Skip.DEGENERATE, "no finite GPU utilisation values")
        med = upper_median(vals)
        values = {"series": s.label, "median": med, "points": len(vals)}
        res.measurements.append(Measurement("gpu-util", s.label, values, f"median {med:.3g}"))
        res.findings.append(Finding(TP_GPU_UTIL.id, TP_GPU_UTIL.level, "GPU utilisation over the log, for context.",
                                    Evidence(values, "{series}: median {median} over {points} samples"),
                                    ctx.point(s, idx[-1]), s.label, s.key))
        return None

    return per_series(ctx, Role.GPU_UTIL, res, gpu_utilisation, "GPU-utilisation")
