"""Overhead of the in-training callbacks per logged step: ``Guardian.observe`` (read the metrics, judge the run so
far, report what is new), against a floor measured in the same run (``json.dumps`` of the same metrics dict, what
any logger pays to write the line).

    .venv/bin/python bench/guardian.py [POINTS ...]     # default: 100 1000 5000

Prints, per log length, the mean microseconds of one observe() over the last 100 steps (the cost grows with the
points judged so far: the rules are re-run on the whole in-memory log) and its ratio to the floor.
"""

from __future__ import annotations

import json
import math
import sys
import time

from trainlint.integrations import Guardian


def metrics(step: int) -> dict[str, float]:
    return {"loss": 3.0 * math.exp(-step / 800) + 0.05 * math.sin(step), "learning_rate": 1e-3,
            "grad_norm": 1.0 + 0.1 * math.cos(step), "epoch": step / 500}


def main(points: list[int]) -> None:
    print("| logged points so far | observe() µs/step | floor (json.dumps) µs | ratio |")
    print("|---|---|---|---|")
    for n in points:
        g = Guardian()
        for step in range(1, n - 100 + 1):
            g.observe(step, metrics(step))
        t0 = time.perf_counter()
        for step in range(n - 100 + 1, n + 1):
            g.observe(step, metrics(step))
        per = (time.perf_counter() - t0) / 100 * 1e6
        t0 = time.perf_counter()
        for step in range(10000):
            json.dumps({"step": step, **metrics(step)})
        floor = (time.perf_counter() - t0) / 10000 * 1e6
        print(f"| {n} | {per:.0f} | {floor:.1f} | {per / floor:.0f}x |")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 5000])
