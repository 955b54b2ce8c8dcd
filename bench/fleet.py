"""``check`` on a 100-run folder: on disk, on a local S3-compatible server (moto's server mode on loopback), and
with ``--jobs 2`` against serial. A script, not a test (issue 27's closing numbers).

    .venv/bin/python bench/fleet.py [--runs 100] [--repeat 3]

The folder is made from the fixture runs (HF trainer_state.json, Keras CSV, llama-factory JSONL, Coqui text, a
TensorBoard event folder, detectron2 JSON, YOLO CSV), copied round-robin into run-000 … run-099 under
bench/.work/fleet, and uploaded once to a bucket of the local S3 server. Each timing is the median of
``--repeat`` whole ``trainlint check`` processes (start-up included), output to /dev/null.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from s3server import S3Server  # noqa: E402


def make_fleet(dest: Path, runs: int) -> int:
    if dest.exists():
        shutil.rmtree(dest)
    sources = sorted(p for p in (ROOT / "fixtures" / "runs").iterdir() if p.is_dir())
    size = 0
    for i in range(runs):
        src = sources[i % len(sources)]
        shutil.copytree(src, dest / f"run-{i:03d}")
    old = time.time() - 7200  # finished runs, not live ones (as in bench/verdicts.py)
    for p in dest.rglob("*"):
        os.utime(p, (old, old))
        if p.is_file():
            size += p.stat().st_size
    return size


def timed(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, int]:
    times, code = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                              timeout=1800).returncode
        times.append(time.perf_counter() - t0)
    return statistics.median(times), code


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    fleet = ROOT / "bench" / ".work" / "fleet"
    size = make_fleet(fleet, args.runs)
    tl = [sys.executable, "-m", "trainlint.cli", "check"]
    server = S3Server()
    try:
        fs = server.filesystem()
        fs.mkdir("fleet-bench")
        fs.put(str(fleet) + "/", "fleet-bench/fleet/", recursive=True)
        env = server.env
        rows = {}
        rows["disk, serial"] = timed([*tl, str(fleet)], env, args.repeat)
        rows["disk, --jobs 2"] = timed([*tl, "--jobs", "2", str(fleet)], env, args.repeat)
        rows["S3 (moto on loopback), serial"] = timed([*tl, "s3://fleet-bench/fleet"], env, args.repeat)
        rows["S3 (moto on loopback), --jobs 2"] = timed([*tl, "--jobs", "2", "s3://fleet-bench/fleet"], env,
                                                        args.repeat)
    finally:
        server.stop()
    print(f"{args.runs} runs, {size / 1e6:.1f} MB, median of {args.repeat} whole processes "
          f"({os.cpu_count()} CPUs)")
    base = rows["disk, serial"][0]
    for name, (t, code) in rows.items():
        print(f"  {name:34s} {t:7.2f} s  ({t / base:.2f}x disk serial; exit {code})")
    print(json.dumps({k: round(v[0], 3) for k, v in rows.items()}))


if __name__ == "__main__":
    main()
