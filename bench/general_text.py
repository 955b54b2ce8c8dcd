"""Throughput of the general text reader against the trainer-stdout reader on the same bytes (issue 24).

    .venv/bin/python bench/general_text.py [--mb 20]

Each shape is written to bench/.work/, read cold by both readers (format forced, so detection is not timed) and
reported in MB/s with the points read; the best of three runs. A shape the stdout reader does not read shows 0
points for it: the MB/s are still the bytes it went through.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
WORK = Path(__file__).resolve().parent / ".work"

from trainlint.readers import read  # noqa: E402

SHAPES = {
    "llm.c": lambda i: f"step {i:5d}/99999 | train loss {3 - i * 1e-5:.6f} | norm {1 + (i % 7) / 10:.4f} | "
                       f"lr 6.00e-04 | {120 + i % 5:.2f} ms | 41000 tok/s\n",
    "key=value": lambda i: f"2024-05-01 12:00:00,123 - trainer - INFO - step {i}: loss={2 - i * 1e-6:.5f}, "
                           f"lr=0.001, grad_norm={1 + (i % 3) / 10:.3f}\n",
    "xgboost": lambda i: f"[{i}]\ttrain-logloss:{0.6 - i * 1e-7:.5f}\tvalid-logloss:{0.62 - i * 1e-7:.5f}\n",
    "table": lambda i: f"{i:<10d}{0.69 - i * 1e-7:<12.6f}{0.7 - i * 1e-7:<12.6f}{0.5 + i * 1e-8:<10.6f}00:01\n",
}
HEADER = {"table": "epoch     train_loss  valid_loss  accuracy  time\n"}


def make(name: str, mb: int) -> Path:
    WORK.mkdir(exist_ok=True)
    p = WORK / f"general-{name}.log"
    if p.exists() and p.stat().st_size >= mb << 20:
        return p
    with open(p, "w") as f:
        f.write(HEADER.get(name, ""))
        i, size = 0, 0
        while size < mb << 20:
            block = "".join(SHAPES[name](j) for j in range(i, i + 10000))
            f.write(block)
            size += len(block)
            i += 10000
    return p


def rate(path: Path, fmt: str) -> tuple[float, int]:
    best, points = 0.0, 0
    for _ in range(3):
        t = time.perf_counter()
        log = read(str(path), fmt)
        dt = time.perf_counter() - t
        best = max(best, path.stat().st_size / dt / 1e6)
        points = sum(len(s) for s in log.series.values())
    return best, points


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=20)
    a = ap.parse_args()
    print("| shape | MB | stdout reader MB/s (points) | general reader MB/s (points) | general / stdout |")
    print("|---|---|---|---|---|")
    for name in SHAPES:
        p = make(name, a.mb)
        t, tn = rate(p, "text")
        g, gn = rate(p, "general")
        print(f"| {name} | {p.stat().st_size / 1e6:.0f} | {t:.1f} ({tn}) | {g:.1f} ({gn}) | {g / t:.2f}x |")


if __name__ == "__main__":
    main()
