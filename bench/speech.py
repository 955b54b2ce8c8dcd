"""``trainlint preflight`` on a 10,000-line speech manifest with its audio: wall time and peak RSS.

    .venv/bin/python bench/speech.py [LINES]     # default: 10000; files in bench/.work/speech (made once)

The corpus is made here with numpy and ``wave``: 16 kHz mono 16-bit tones of 1-4 s (about 2.5 s each, 80 KB), a
NeMo-style JSON-lines manifest with a transcript of a plausible length for each, and faults sprinkled in (1% clipped,
0.5% missing, 0.2% byte-identical copies, 0.3% at 22,050 Hz, 0.5% with a 3 s silence). Preflight runs in a child
process, so its peak RSS is its own. It runs twice: first cold (the corpus's files evicted from the page cache with
``posix_fadvise(DONTNEED)``, only those files), then warm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", ".work", "speech")
WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "she", "sells", "sea", "shells",
         "by", "the", "shore", "and", "every", "cloud", "has", "a", "silver", "lining", "somewhere", "high", "above",
         "the", "quiet", "town"]


def make(n: int) -> str:
    manifest = os.path.join(WORK, f"manifest_{n}.jsonl")
    if os.path.exists(manifest):
        return manifest
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(WORK, "wavs"))
    rng = np.random.default_rng(29)
    rows = []
    for i in range(n):
        rate = 22050 if i % 331 == 7 else 16000
        secs = float(rng.uniform(1.0, 4.0))
        t = np.arange(int(secs * rate)) / rate
        x = 0.3 * np.sin(2 * np.pi * (150 + i % 400) * t) * (1 + 0.2 * np.sin(2 * np.pi * 3 * t))
        if i % 100 == 3:
            x = np.clip(x * 4, -1, 1)
        if i % 200 == 5 and secs > 3.5:
            x[int(0.2 * rate):int(3.4 * rate)] = 0
        name = f"wavs/{i:05d}.wav"
        if i % 200 != 11:  # 0.5% missing
            with wave.open(os.path.join(WORK, name), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(rate)
                w.writeframes((x * 32767).astype("<i2").tobytes())
        if i % 500 == 17:
            shutil.copy(os.path.join(WORK, f"wavs/{i - 1:05d}.wav"), os.path.join(WORK, name))
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(int(secs * 2.6)))
        rows.append({"audio_filepath": name, "duration": round(secs, 3), "text": words.capitalize() + "."})
    with open(manifest, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return manifest


def evict(folder: str) -> None:
    """Drop these files (and only these) from the page cache: a cold read, as of a corpus not touched lately."""
    for e in os.scandir(folder):
        fd = os.open(e.path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def main(n: int) -> None:
    manifest = make(n)
    audio_mb = sum(e.stat().st_size for e in os.scandir(os.path.join(WORK, "wavs"))) / 1e6
    cmd = [sys.executable, "-m", "trainlint.cli", "preflight", manifest, "--format", "json"]
    runs = []
    for cold in (True, False):
        if cold:
            evict(os.path.join(WORK, "wavs"))
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", "import resource,subprocess,sys;"
                            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
                            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *cmd],
                           capture_output=True, text=True, check=True)
        runs.append((time.perf_counter() - t0, int(p.stdout.strip()) / 1024))
    doc = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout)
    found: dict[str, int] = {}
    for r in doc["reports"]:
        for f in r["findings"]:
            found[f["id"]] = found.get(f["id"], 0) + 1
    print("| manifest lines | audio MB | preflight s (cold) | s (warm) | peak RSS MB |")
    print("|---|---|---|---|---|")
    print(f"| {n} | {audio_mb:.0f} | {runs[0][0]:.1f} | {runs[1][0]:.1f} | {max(r[1] for r in runs):.0f} |")
    print("findings (at most 50 of a rule are listed; each counts them all):",
          ", ".join(f"{k} {v}" for k, v in sorted(found.items())))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
