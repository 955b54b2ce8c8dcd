"""Per-series measurements that grow with the series instead of being recomputed from the top.

A log that is appended to is read from where it was left; these let the rules follow it in
O(new points): the finite points, the non-finite ones, running moments, a sorted copy for
medians, the lowest windowed level, and the step bookkeeping of resumes. The cache lives on the
series and is dropped whenever the series shrinks or is rewritten (``Series.truncate``,
``Series.remove_indices``), so it can never describe points that are gone.
"""

from __future__ import annotations

import math
from bisect import insort

from ..model import Series
from .base import median


class Stats:
    __slots__ = (
        "count_fin",
        "dups",
        "fin_idx",
        "fin_vals",
        "first_back",
        "last_seam",
        "levels",
        "m2",
        "mean",
        "n",
        "negative",
        "nonfinite",
        "nonpos",
        "prev_of_back",
        "seen",
        "sorted_fin",
        "sorted_n",
        "top",
    )

    def __init__(self) -> None:
        self.n = 0                          # points processed
        self.fin_idx: list[int] = []
        self.fin_vals: list[float] = []
        self.nonfinite: list[int] = []
        self.count_fin = 0
        self.mean = 0.0                     # Welford running moments of the finite values
        self.m2 = 0.0
        self.nonpos: list[int] = []         # indices of values <= 0 (learning rates)
        self.negative = 0
        self.sorted_fin: list[float] | None = None
        self.sorted_n = 0
        self.levels: dict[int, tuple[float, int, int, int]] = {}  # w -> (level, a, b, next_b)
        self.top = -1                       # index of the largest step so far
        self.first_back: int | None = None
        self.last_seam = 0                  # finite position where the last run in the log begins
        self.prev_of_back = 0
        self.seen: dict[float, int] = {}
        self.dups: list[tuple[int, int]] = []


def stats(s: Series) -> Stats:
    """The up-to-date cache of ``s`` (extended over the points added since the last call)."""
    st = s.__dict__.get("_stats")
    if st is None:
        st = s.__dict__["_stats"] = Stats()
    n = len(s.values)
    if st.n == n:
        return st
    values, steps = s.values, s.steps
    fin_idx, fin_vals, nonfinite, nonpos, seen, dups = (st.fin_idx, st.fin_vals, st.nonfinite, st.nonpos, st.seen,
                                                         st.dups)
    isfinite = math.isfinite
    count, mean, m2 = st.count_fin, st.mean, st.m2
    top = st.top
    for i in range(st.n, n):
        v = values[i]
        if isfinite(v):
            if fin_idx and steps[i] < steps[fin_idx[-1]]:
                st.last_seam = len(fin_idx)
            fin_idx.append(i)
            fin_vals.append(v)
            count += 1
            d = v - mean
            mean += d / count
            m2 += d * (v - mean)
        else:
            nonfinite.append(i)
        if v <= 0:
            nonpos.append(i)
            if v < 0:
                st.negative += 1
        x = steps[i]
        if top >= 0 and st.first_back is None and x < steps[top]:  # a seam: the step counter went back
            st.first_back, st.prev_of_back = i, top
        if top < 0 or x > steps[top]:
            top = i
        j = seen.get(x)
        if j is not None and not (v == values[j] or (v != v and values[j] != values[j])):
            dups.append((j, i))
        seen[x] = i
    st.count_fin, st.mean, st.m2, st.top, st.n = count, mean, m2, top, n
    return st


def finite(s: Series) -> tuple[list[int], list[float]]:
    st = stats(s)
    return st.fin_idx, st.fin_vals


def sorted_finite(s: Series) -> list[float]:
    """The finite values in order (for medians of the whole series), kept sorted as points arrive."""
    st = stats(s)
    new = st.fin_vals[st.sorted_n:]
    if st.sorted_fin is None or len(new) > max(64, len(st.fin_vals) // 8):
        st.sorted_fin = sorted(st.fin_vals)
    else:
        for v in new:
            insort(st.sorted_fin, v)
    st.sorted_n = len(st.fin_vals)
    return st.sorted_fin


def lowest_level(s: Series, w: int) -> tuple[float, tuple[int, int]]:
    """The lowest median over ``w`` consecutive finite points (windows from the start may be as
    short as two points), with its window [a, b) in finite-point positions. O(new points)."""
    st = stats(s)
    vals = st.fin_vals
    n = len(vals)
    best, a0, b0, next_b = st.levels.get(w, (math.inf, 0, 0, min(2, w)))
    for b in range(next_b, n + 1):
        a = b - w if b > w else 0
        level = median(vals[a:b])
        if level < best:
            best, a0, b0 = level, a, b
    st.levels[w] = (best, a0, b0, n + 1)
    return best, (a0, b0)


def lowest_window(vals: list[float], w: int, start: int) -> tuple[float, tuple[int, int]]:
    """``lowest_level`` over ``vals[start:]`` only (the run after a restart seam), computed afresh."""
    best, a0, b0 = math.inf, start, start
    for b in range(start + min(2, w), len(vals) + 1):
        a = max(start, b - w)
        level = median(vals[a:b])
        if level < best:
            best, a0, b0 = level, a, b
    return best, (a0, b0)


def run_start(s: Series) -> int:
    """Finite position where the last run in the log begins: after the last point whose step is below the
    step before it (a run restarted into the same file). 0 when the steps never go back. O(new points)."""
    return stats(s).last_seam
