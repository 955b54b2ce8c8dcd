"""A series' own noise, measured: the scale trend rules judge a level change against (issue 30).

A loss logged per batch moves by half between two windows of five while it falls; an epoch loss or a running
average moves by a percent. A fixed ratio cannot tell the first's noise from the second's trend, and every
guard added for one opened a miss in the other. So the trend rules measure the noise of the series itself:

- **scale**: the robust standard deviation of the point-to-point changes of the *log* values (1.4826 times
  their median absolute deviation from their median, divided by sqrt 2: a change is the difference of two
  noisy points), over the last ``NOISE_SPAN`` finite positive points. Working on log values makes a 2x rise
  at a level of 10 and at 0.1 the same change; the changes' median removes a steady trend, and the MAD
  ignores the few large changes a divergence or a spike brings (Iglewicz and Hoaglin's robust z-score).
- **level error**: a median of ``w`` points has a standard error of about 1.2533 sigma / sqrt(w), so the
  difference of two window levels has 1.2533 sigma sqrt(1/w1 + 1/w2).
- **selection**: the lowest of ``m`` window levels is itself lower than the typical level by about
  sqrt(2 ln m) level errors; a rise measured from it must exceed that much before it is a rise.
- **its own uncertainty**: a scale measured from ``k`` changes is itself uncertain, by about 1.167 / sqrt(k) of
  itself (the MAD's efficiency on normal data is 37%); ``noise_upper`` is the scale two such errors above, which
  a rule uses where a small rise must stand out even if the noise was measured low (nine changes of a noisy
  per-batch loss can put the MAD on a cluster of small ones).

The work is bounded (``NOISE_SPAN`` points, whatever the series' length), so a re-judge stays O(appended).
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.accel import CSTATS
from .stats import stats

if TYPE_CHECKING:
    from ..core.model import Series

#: the changes the noise is measured over: the last this many finite positive points of the series
NOISE_SPAN = 256
MAD_TO_SIGMA = 1.4826
MEDIAN_SE = 1.2533  # sqrt(pi / 2): the standard error of a median of w normal points is this sigma / sqrt(w)
MAD_SE = 1.167  # sqrt(1.362): the relative standard error of a MAD-based scale from k normal points is this / sqrt(k)


def log_noise(vals: Sequence[float], a: int, b: int) -> tuple[float, int]:
    """(sigma of one point's log value, how many changes measured it) over finite positions [a, b)."""
    lo = max(a, b - NOISE_SPAN)
    if (CSTATS is not None and isinstance(vals, array) and vals.typecode == "d"
            and (got := CSTATS.noise_mad(vals, lo, b)) is not None):  # compiled: the MAD (not its quantised case)
        changes, mad = got
        if changes < 4:
            return math.nan, changes
        if mad != 0:
            return MAD_TO_SIGMA * mad / math.sqrt(2), changes
    logs = [math.log(v) for v in vals[lo:b] if v > 0]
    d = sorted(y - x for x, y in itertools.pairwise(logs))
    if len(d) < 4:
        return math.nan, len(d)
    med = d[len(d) // 2] if len(d) % 2 else (d[len(d) // 2 - 1] + d[len(d) // 2]) / 2
    dev = sorted(abs(x - med) for x in d)
    mad = dev[len(dev) // 2] if len(dev) % 2 else (dev[len(dev) // 2 - 1] + dev[len(dev) // 2]) / 2
    if mad == 0:  # quantised or repeated values: the mean absolute deviation (1.2533 times it is sigma)
        return MEDIAN_SE * sum(dev) / len(dev) / math.sqrt(2), len(d)
    return MAD_TO_SIGMA * mad / math.sqrt(2), len(d)


def fitted_change(s: Series, seg: int, without_highest: bool = False) -> tuple[float, int]:
    """(the fall of a least-squares line through the log values of finite positive points from finite position
    ``seg`` on, from its first point to its last, in log units; how many points). Running sums in the series'
    cache: O(appended). ``without_highest`` leaves the highest point out (its first occurrence, kept with the
    sums): a verdict that must not rest on one point asks for both (one spike of 300x near the end of 27 points
    tilts the line to a 3x rise)."""
    st = stats(s)
    vals = st.fin_vals
    memo = st.memo.get("fit")
    if not (isinstance(memo, list) and memo[0] == seg and memo[1] <= len(vals)):
        # seg, next, n, sx, sy, sxx, sxy, the highest log value and its x
        memo = st.memo["fit"] = [seg, seg, 0, 0.0, 0.0, 0.0, 0.0, -math.inf, 0.0]
    _, nxt, n, sx, sy, sxx, sxy, ymax, xmax = memo
    if CSTATS is not None:  # the loop below, compiled
        n, sx, sy, sxx, sxy, ymax, xmax = CSTATS.fit_sums(vals, seg, nxt, (n, sx, sy, sxx, sxy, ymax, xmax))
        nxt = len(vals)
    for j in range(nxt, len(vals)):
        v = vals[j]
        if v > 0:
            x, y = float(j - seg), math.log(v)
            n, sx, sy, sxx, sxy = n + 1, sx + x, sy + y, sxx + x * x, sxy + x * y
            if y > ymax:
                ymax, xmax = y, x
    memo[1:] = [len(vals), n, sx, sy, sxx, sxy, ymax, xmax]
    if without_highest and n:
        n, sx, sy, sxx, sxy = n - 1, sx - xmax, sy - ymax, sxx - xmax * xmax, sxy - xmax * ymax
    den = n * sxx - sx * sx
    if n < 3 or den <= 0:
        return 0.0, n
    slope = (n * sxy - sx * sy) / den
    span = (len(vals) - 1 - seg)
    return -slope * span, n


def highest_fitted(s: Series, seg: int) -> float:
    """The highest value among the points ``fitted_change`` left out with ``without_highest``."""
    fitted_change(s, seg)
    memo = stats(s).memo["fit"]
    return math.exp(memo[7])  # type: ignore[index]


def noise_upper(sigma: float, k: int) -> float:
    """The scale two of its own standard errors above ``sigma`` measured from ``k`` changes (inf for none)."""
    return sigma * (1 + 2 * MAD_SE / math.sqrt(k)) if k > 0 else math.inf


def level_se(sigma: float, w1: int, w2: int) -> float:
    """Standard error of the difference of two medians over ``w1`` and ``w2`` points, in log units."""
    return MEDIAN_SE * sigma * math.sqrt(1 / max(1, w1) + 1 / max(1, w2))


def selection(m: int) -> float:
    """How many level errors the lowest of ``m`` window levels sits below a typical one, by chance alone."""
    return math.sqrt(2 * math.log(m)) if m > 1 else 0.0


def z_of(change: float, se: float) -> float:
    """A log-level change in level errors (inf when the series has no noise at all)."""
    if se > 0:
        return change / se
    return math.inf if change > 0 else (-math.inf if change < 0 else 0.0)
