"""Run every step of ``make test`` and report them all: one failing step never hides the others.

    python tests/run_steps.py NAME=COMMAND [NAME=COMMAND ...]

Each COMMAND runs through the shell, in order, whatever the earlier ones returned; the exit code is 1 when any
step failed. Why: a unit test that failed used to stop ``make test`` before the extension build and the
real-editor tests, so a newcomer (and CI) saw one failure and none of the rest.
"""

from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    results: list[tuple[str, int, float]] = []
    for spec in argv:
        name, sep, command = spec.partition("=")
        if not sep or not name or not command:
            print(f"run_steps: expected NAME=COMMAND, got {spec!r}", file=sys.stderr)
            return 2
        print(f"\n== {name}: {command}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.run(command, shell=True).returncode
        results.append((name, rc, time.monotonic() - t0))
    print("\n== make test, step by step", flush=True)
    for name, rc, took in results:
        print(f"  {'ok    ' if rc == 0 else 'FAILED'}  {name:<10} exit {rc:<3} {took:6.1f} s")
    failed = [name for name, rc, _ in results if rc != 0]
    print(f"make test: {'failed steps: ' + ', '.join(failed) if failed else 'every step succeeded'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
