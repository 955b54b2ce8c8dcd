"""`trainlint series --format json` on a JSONL with a new key on each line (issue 25 item 10): seconds per size.

    python bench/series_keys.py [KEYS ...]      # default 20000 100000

Each located point used to compile its key's regex and read 64 KB around its line (43 s at 20,000 keys).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    for keys in [int(a) for a in sys.argv[1:]] or [20_000, 100_000]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "metrics.jsonl"
            with path.open("w") as f:
                for i in range(keys):
                    f.write(json.dumps({"step": i, "loss": 2 - i / keys, f"key_{i}": 0.5}) + "\n")
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "trainlint.cli", "series", "--format", "json", str(path)],
                               capture_output=True, text=True)
            took = time.perf_counter() - t0
            series = len(json.loads(r.stdout)["files"][0]["series"]) if r.returncode == 0 else None
            print(json.dumps({"keys": keys, "seconds": round(took, 2), "series": series, "exit": r.returncode}))


if __name__ == "__main__":
    main()
