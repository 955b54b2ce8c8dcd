"""``trainlint preflight`` on a 1M-line dataset: lines per second and peak memory, against a floor measured in
the same run (reading the same file's lines and ``json.loads`` of each, what any loader pays).

    .venv/bin/python bench/preflight.py [LINES]     # default: 1000000

The dataset is GSM8K's 300-line training excerpt (fixtures/datasets) repeated with a counter in each question,
so every example is distinct and the duplicate map holds a hash per line (the worst case for memory). Each
measurement runs in a child process, so its peak RSS is its own.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "fixtures", "datasets", "gsm8k_train_head300.jsonl")
FLOOR = "import json,sys\nfor line in open(sys.argv[1], encoding='utf-8'):\n    json.loads(line)\n"


def make(path: str, n: int) -> None:
    with open(SOURCE, encoding="utf-8") as src:
        rows = [json.loads(line) for line in src]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            r = rows[i % len(rows)]
            f.write(json.dumps({"question": f"({i}) {r['question']}", "answer": r["answer"]}) + "\n")


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS in MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return took, max(peak, before) / 1024


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "train.jsonl")
        make(path, n)
        mb = os.path.getsize(path) / 1e6
        floor_s, floor_rss = timed([sys.executable, "-c", FLOOR, path])
        pf_s, pf_rss = timed([sys.executable, "-m", "trainlint.cli", "preflight", path, "--quiet"])
    print("| dataset | lines | MB | preflight s | lines/s | peak RSS MB | floor s (read + json.loads) | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| GSM8K x{n // 300} | {n} | {mb:.0f} | {pf_s:.1f} | {n / pf_s:,.0f} | {pf_rss:.0f} | {floor_s:.1f} | "
          f"{pf_s / floor_s:.2f}x |")
    print(f"(floor peak RSS {floor_rss:.0f} MB; RSS is the maximum over this script's children so far)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
