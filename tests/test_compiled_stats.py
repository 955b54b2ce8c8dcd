"""The compiled series measurements (``_cstats``) give the rules' Python loops' numbers bit for bit.

Why: every evidence number of a trend rule comes out of these caches (the lowest window median, the fitted fall,
the running moments); a compiled loop that rounds once differently would change a verdict on the edge of its
threshold, and only on machines with the extension. Each test runs the same series through both paths (the
module-level ``CSTATS`` set to None is the pure path) and compares every cached field, also when the series
is fed in pieces (a live log judged at every append) and when it holds NaN, seams, zeros, -0.0 and repeated steps;
and TP-STEP-CLIFF's wall-clock intervals, walked with held-out steps arriving between pieces.
"""

from __future__ import annotations

import math
import os
import random
import struct
from array import array
from pathlib import Path

import pytest

from trainlint.core import accel
from trainlint.core.model import Role, Series
from trainlint.readers import read
from trainlint.rules import noise, stats, timing

CORPUS = Path(os.environ.get("TRAINLINT_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
pytestmark = pytest.mark.skipif(accel.CSTATS is None, reason=f"compiled measurements: {accel.CSTATS_REASON}")

FIELDS = [f for f in stats.Stats.__slots__ if f not in ("_values", "memo", "levels")]


def _bits(x: object) -> object:
    """A value compared exactly: floats by their bits (so -0.0 != 0.0 and NaN == NaN), containers element-wise."""
    if isinstance(x, float):
        return struct.pack("<d", x)
    if isinstance(x, (list, tuple, array, range)):
        return [_bits(v) for v in x]
    if isinstance(x, dict):
        return {k: _bits(v) for k, v in x.items()}
    return x


def _measure(points: list[tuple[float, float, float]], pieces: list[int], compiled: bool,
             monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Feed the points in pieces, measuring after each as the rules do; everything measured, exactly."""
    monkeypatch.setattr(stats, "CSTATS", accel.CSTATS if compiled else None)
    monkeypatch.setattr(noise, "CSTATS", accel.CSTATS if compiled else None)
    s = Series("loss", Role.TRAIN_LOSS)
    out: list[object] = []
    done = 0
    for cut in [*pieces, len(points)]:
        for step, value, wall in points[done:cut]:
            s.append(step, value, 1, wall)
        done = max(done, cut)
        st = stats.stats(s)
        out.append({f: _bits(getattr(st, f)) for f in FIELDS})
        for w in (1, 2, 5, 20):
            out.append(_bits(stats.lowest_level(s, w)))
            out.append(_bits(stats.highest_level(s, w, min(3, len(s)))))
        out.append(_bits(noise.fitted_change(s, 0)))
        out.append(_bits(noise.fitted_change(s, 0, without_highest=True)))
        vals = st.fin_vals
        for a, b in ((0, len(vals)), (len(vals) // 2, len(vals)), (0, len(vals) - 1)):
            out.append(_bits(noise.log_noise(vals, a, b)))
        out.append(_bits(noise.log_noise(s.values, 0, len(s))))  # NaN, inf, zeros and negatives among them
    return out


def _random_points(rnd: random.Random, n: int) -> list[tuple[float, float, float]]:
    special = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.5, 1e-300, 5e-324]
    step, points = 0.0, []
    for _ in range(n):
        r = rnd.random()
        step = step - rnd.randint(1, 50) if r < 0.01 else (step if r < 0.05 else step + rnd.choice([1.0, 0.5, 10.0]))
        value = rnd.choice(special) if rnd.random() < 0.03 else rnd.choice(
            [rnd.lognormvariate(0, 1), round(rnd.random(), 2), 2.0 - step * 1e-4 + rnd.gauss(0, 0.05)])
        wall = math.nan if rnd.random() < 0.1 else 1e9 + step
        points.append((step, value, wall))
    return points


@pytest.mark.parametrize("seed", range(40))
def test_random_series_measure_the_same_bit_for_bit(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    points = _random_points(rnd, rnd.choice([3, 50, 400, 3000]))
    if seed % 4 == 0:  # all finite and rising: the compiled loop takes the whole series
        points = [(float(i), abs(v) + 0.1 if math.isfinite(v) else 1.0, w) for i, (_, v, w) in enumerate(points)]
    pieces = sorted(rnd.randint(0, len(points)) for _ in range(rnd.randint(0, 6)))
    assert _measure(points, pieces, True, monkeypatch) == _measure(points, pieces, False, monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_signed_zeros_in_the_windows_keep_their_order(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """0.0 and -0.0 are equal but not the same bits: the window must insert after equal values and delete the first
    equal one, as insort and bisect_left do, or a median of zeros comes out with the other sign."""
    rnd = random.Random(seed)
    points = [(float(i), rnd.choice([0.0, -0.0, 0.0, -0.0, 1.0]), math.nan) for i in range(300)]
    pieces = [rnd.randint(0, 300)]
    assert _measure(points, pieces, True, monkeypatch) == _measure(points, pieces, False, monkeypatch)


def test_every_long_corpus_series_measures_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix in {".csv", ".jsonl", ".log", ".txt"}]
    if not logs:
        pytest.skip(f"no corpus at {CORPUS} (TRAINLINT_CORPUS)")
    compared = 0
    for p in logs:
        try:
            log = read(str(p))
        except Exception:  # a file no reader takes: not this test's subject
            continue
        for s in log.series.values():
            if len(s) < 200:
                continue
            points = [(s.steps[i], s.values[i], s.wall(i)) for i in range(len(s))]
            pieces = [len(points) // 3, len(points) // 2]
            assert _measure(points, pieces, True, monkeypatch) == _measure(points, pieces, False, monkeypatch), p
            compared += 1
    assert compared > 30


def _walk(points: list[tuple[float, float, float]], evals: list[float], pieces: list[int], compiled: bool,
          monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """TP-STEP-CLIFF's kept wall-clock intervals after each piece, the held-out steps arriving with them."""
    monkeypatch.setattr(timing, "CSTATS", accel.CSTATS if compiled else None)
    s, held = Series("loss", Role.TRAIN_LOSS), Series("eval_loss", Role.EVAL_LOSS)
    wi = timing._WallIntervals()
    out: list[object] = []
    done = 0
    for cut in [*pieces, len(points)]:
        for step, value, wall in points[done:cut]:
            s.append(step, value, 1, wall)
        for x in evals[done // 10:cut // 10]:
            held.append(x, 1.0, 1)
        done = max(done, cut)
        wi.update(s, [held])
        out.append(_bits([wi.idx, wi.start, wi.per_step, wi.prev, wi.pos]))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_wall_clock_intervals_walk_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    points = _random_points(rnd, rnd.choice([300, 2000, 5000]))
    points = [(st, v, w + rnd.choice([0.0, 0.5, -3.0, math.nan]) if rnd.random() < 0.2 else w)
              for st, v, w in points]
    evals = sorted({rnd.choice(points)[0] for _ in range(len(points) // 10)})
    pieces = sorted(rnd.randint(0, len(points)) for _ in range(rnd.randint(0, 4)))
    assert len(points) > timing.WALK_COMPILED  # the first walk at least takes the compiled loop
    assert _walk(points, evals, pieces, True, monkeypatch) == _walk(points, evals, pieces, False, monkeypatch)


@pytest.mark.parametrize("seed", range(30))
def test_log_noise_measures_the_same_bit_for_bit(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The noise scale every trend rule judges against: its compiled MAD is taken for a window of doubles and
    gives the pure function's sigma, in windows of every shape (ties, quantised values whose MAD is 0, zeros and
    negatives left out, an infinite value, fewer than four changes, a window start past its end)."""
    rnd = random.Random(seed)
    n = rnd.choice([0, 3, 5, 40, 256, 600])
    kind = seed % 5
    vals = array("d", [
        rnd.lognormvariate(0, 1) if kind == 0 else
        round(rnd.uniform(0.5, 1.5), 1) if kind == 1 else  # quantised: often a MAD of 0
        rnd.choice([1.0, 2.0, 0.0, -1.0, 1.5]) if kind == 2 else
        rnd.choice([rnd.lognormvariate(0, 1), math.inf, 5e-324]) if kind == 3 else
        2.0 - i * 1e-3 + rnd.gauss(0, 0.01)
        for i in range(n)])
    windows = [(0, n), (n // 3, n), (0, max(0, n - 1)), (n, n), (n // 2, n // 3), (-5, n)]
    compiled_taken = 0
    for a, b in windows:
        monkeypatch.setattr(noise, "CSTATS", None)
        pure = noise.log_noise(vals, a, b)
        monkeypatch.setattr(noise, "CSTATS", accel.CSTATS)
        assert _bits(noise.log_noise(vals, a, b)) == _bits(pure), (a, b)
        compiled_taken += accel.CSTATS.noise_mad(vals, max(a, b - noise.NOISE_SPAN), b) is not None
    if kind in (0, 4):
        assert compiled_taken >= 4  # the compiled MAD was the one measured, not the pure fallback

