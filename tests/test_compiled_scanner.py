"""The compiled scanner (trainlint.core._cscan) and the pure-Python readers read every real log identically.

Both paths judge every log of the corpus, the live gallery and the labelled population in their own process (the
path is chosen at import: TRAINLINT_PURE=1 forces Python), and every log must give the same series (steps,
values, wall times, lines, records, byte offsets: compared as bytes, so a NaN's bits count), the same events and
problems, and the same `check` JSON. Per format the test names how many logs it compared: a format the scanner
covers must have real logs behind its claim.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections import Counter
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS, FIXTURES, ROOT

pytestmark = pytest.mark.corpus

ROOTS = [CORPUS, FIXTURES / "live", FIXTURES / "population"]
# The formats whose hot loop the scanner has, and the fewest real logs of each the comparison must include.
COVERED = {"csv": 20}


def _compiled_reason() -> str | None:
    from trainlint.core import accel

    return None if accel.CSCAN is not None else accel.REASON


def _dump(pure: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    env.pop("TRAINLINT_PURE", None)
    if pure:
        env["TRAINLINT_PURE"] = "1"
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "cscan_dump.py"), *map(str, ROOTS)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


@cache
def dumps() -> tuple[dict, dict]:
    compiled, pure = _dump(False), _dump(True)
    assert compiled["compiled"] and not pure["compiled"], (compiled["reason"], pure["reason"])
    return compiled["logs"], pure["logs"]


def _formats(entry: dict) -> set[str]:
    return {entry["format"], *(["tfevents"] if entry["event_dirs"] else [])}


@pytest.mark.parametrize("fmt", sorted(COVERED))
def test_both_paths_read_every_real_log_identically(fmt: str) -> None:
    reason = _compiled_reason()
    if reason is not None:
        pytest.skip(reason)
    if not CORPUS.is_dir():
        pytest.skip(f"the corpus is not available: {CORPUS} (set TRAINLINT_CORPUS)")
    compiled, pure = dumps()
    assert sorted(compiled) == sorted(pure)
    logs = [p for p, e in pure.items() if fmt in _formats(e)]
    for p in logs:
        a, b = compiled[p], pure[p]
        assert a["series"] == b["series"], p
        assert a["events"] == b["events"], p
        assert json.dumps(a["report"], sort_keys=True) == json.dumps(b["report"], sort_keys=True), p
    counts = Counter(os.path.relpath(p, ROOT).split(os.sep)[1] if p.startswith(str(FIXTURES)) else "corpus"
                     for p in logs)
    print(f"{fmt}: {len(logs)} logs compared ({dict(counts)})")
    assert len(logs) >= COVERED[fmt], f"only {len(logs)} {fmt} logs: the comparison would claim too little"


def test_the_pure_path_is_forced_by_the_environment() -> None:
    """TRAINLINT_PURE=1 chooses the Python readers at import, with the reason; without it a built scanner is used."""
    code = "from trainlint.core import accel; print(accel.CSCAN is None, accel.REASON)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "TRAINLINT_PURE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert r.stdout.startswith("True TRAINLINT_PURE is set"), r.stdout


def _csv_column(cells: list[str]) -> tuple[list[float], int]:
    """The values the compiled scanner reads from a one-column CSV of these cells, and where it stopped."""
    from array import array

    from trainlint.core import accel

    bufs = [(array("d"), array("d"), array("I"), array("d"), "x")]
    stop, _ = accel.CSCAN.csv_rows(cells, 0, 1, -1, -1, 0, bufs)
    return list(bufs[0][1]), stop


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(width=32).map(lambda x: repr(float(x))),
    st.floats(allow_nan=False, allow_infinity=False).flatmap(
        lambda x: st.sampled_from(["%.3g", "%.6f", "%.16g", "%.17g", "%.4e", "%.15e", "%.0f"]).map(lambda f: f % x)),
    st.from_regex(r"[+-]?[0-9]{0,20}\.?[0-9]{0,20}([eE][+-]?[0-9]{0,5})?", fullmatch=True),
    st.text(alphabet="0123456789+-.eEnaifty _ ", max_size=12)))
def test_a_cell_is_the_number_float_reads_or_left_to_python(cell: str) -> None:
    """Every cell the scanner reads is the double float() returns, bit for bit (sign of zero and NaN included);
    a cell float() refuses, or would strip, is left to the Python path (the scanner stops at its row)."""
    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    values, stop = _csv_column([cell])
    if stop == 0:  # left to the Python path
        return
    if not cell.strip():  # csv.reader's blank row: no row, no value
        assert values == []
        return
    (value,) = values
    assert struct.pack("<d", value) == struct.pack("<d", float(cell)), cell
