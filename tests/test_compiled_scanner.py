"""The compiled scanners (trainlint.core._cscan, _cjsonl, _ctext, _cstdout) and the pure-Python readers read every
real log identically.

Both paths judge every log of the corpus, the live gallery and the labelled population in their own process (the
path is chosen at import: TRAINLINT_PURE=1 forces Python), and every log must give the same series (steps,
values, wall times, lines, records, byte offsets: compared as bytes, so a NaN's bits count), the same events and
problems, and the same `check` JSON. Per format the test names how many logs it compared: a format the scanner
covers must have real logs behind its claim.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import struct
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS, FIXTURES, ROOT

pytestmark = pytest.mark.corpus

ROOTS = [CORPUS, FIXTURES / "live", FIXTURES / "population"]
# The formats whose hot loop the scanner has, and the fewest real logs of each the comparison must include.
COVERED = {"csv": 20, "jsonl": 100, "tfevents": 20, "coqui": 6, "text": 300}  # coqui: only 6 real Coqui logs exist


def _compiled_reason(fmt: str = "csv") -> str | None:
    from trainlint.core import accel

    module, reason = {"jsonl": (accel.CJSONL, accel.JSONL_REASON), "coqui": (accel.CTEXT, accel.CTEXT_REASON),
                      "text": (accel.CSTDOUT, accel.STDOUT_REASON)}.get(fmt, (accel.CSCAN, accel.REASON))
    return None if module is not None else reason


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
    assert compiled["jsonl_compiled"] and not pure["jsonl_compiled"], (compiled["jsonl_reason"], pure["jsonl_reason"])
    assert compiled["text_compiled"] and not pure["text_compiled"], (compiled["text_reason"], pure["text_reason"])
    assert compiled["stdout_compiled"] and not pure["stdout_compiled"], (compiled["stdout_reason"],
                                                                         pure["stdout_reason"])
    return compiled["logs"], pure["logs"]


def _formats(entry: dict) -> set[str]:
    return {entry["format"], *(["tfevents"] if entry["event_dirs"] else [])}


@pytest.mark.parametrize("fmt", sorted(COVERED))
def test_both_paths_read_every_real_log_identically(fmt: str) -> None:
    reason = _compiled_reason(fmt)
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
    code = "from trainlint.core import accel; print(accel.CSCAN is None, accel.CJSONL is None, accel.JSONL_REASON)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "TRAINLINT_PURE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert r.stdout.startswith("True True TRAINLINT_PURE is set"), r.stdout


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


def _read_both(path: Path, fmt: str, module: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(compiled, pure) reads of one file in this process: the reader module's scanner (CSCAN, or CJSONL for
    JSONL) set to None for the second."""
    import importlib

    from trainlint.readers import read

    compiled = read(str(path), fmt)
    with monkeypatch.context() as m:
        m.setattr(importlib.import_module(module), "CJSONL" if fmt == "jsonl" else "CSCAN", None)
        pure = read(str(path), fmt)
    return compiled, pure


def _same_reading(a: object, b: object, what: str) -> None:
    import math

    def view(log: object) -> object:
        from cscan_dump import digest

        return ({k: [len(s), digest(s)] for k, s in log.series.items()},
                [[e.kind.value, e.step, e.line, e.record, e.offset, e.file, e.text, repr(e.detail)]
                 for e in log.events],
                [[p.line, p.record, p.message] for p in log.problems],
                {k: v for k, v in log.facts.items() if not (isinstance(v, float) and math.isnan(v))})

    assert view(a) == view(b), what


def _mutants(data: bytes, rnd: random.Random, n: int) -> list[tuple[str, bytes]]:
    """Damaged copies as disks, writers and users make them: flipped bytes, a cut tail, a copied or dropped span."""
    out = []
    for k in range(n):
        d = bytearray(data)
        how = k % 4
        if how == 0:
            for _ in range(rnd.randint(1, 8)):
                d[rnd.randrange(len(d))] = rnd.randrange(256)
        elif how == 1:
            d = d[:rnd.randrange(len(d))]
        elif how == 2:
            a = rnd.randrange(len(d))
            b = min(len(d), a + rnd.randint(1, 400))
            at = rnd.randrange(len(d))
            d = d[:at] + d[a:b] + d[at:]
        else:
            a = rnd.randrange(len(d))
            d = d[:a] + d[a + rnd.randint(1, 200):]
        out.append((f"mutant {k} (kind {how})", bytes(d)))
    return out


def _records(data: bytes) -> list[bytes]:
    recs, pos = [], 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        recs.append(data[pos:pos + 16 + n])
        pos += 16 + n
    return recs


def _reframed(data: bytes, rnd: random.Random, n: int) -> list[tuple[str, bytes]]:
    """Whole records repeated, moved back or dropped: the same step logged twice, steps out of order, a tag's
    second file, a restart's purge."""
    recs = _records(data)
    out = []
    for k in range(n):
        r = list(recs)
        for _ in range(rnd.randint(1, 4)):
            if len(r) < 3:  # a file of one or two records has no order to change
                break
            i = rnd.randrange(1, len(r))
            j = rnd.randrange(1, len(r))
            if k % 3 == 0:
                r.insert(j if k % 2 else i, r[i])  # later, or right after itself: the same step again
            elif k % 3 == 1:
                r.insert(min(i, j), r.pop(max(i, j)))
            else:
                del r[i]
        out.append((f"reframed {k} (kind {k % 3})", b"".join(r)))
    return out


EVENT_FILES = sorted((FIXTURES / "live").glob("*/**/events.out.tfevents.*"))
CSV_FILES = sorted(p for p in (FIXTURES / "live").glob("*/**/*") if p.suffix == ".csv" or p.name == "training.log")
# LLaMA-Factory, detectron2 and RL metrics.jsonl: the gallery has no JSONL log of its own.
JSONL_FILES = [FIXTURES / "runs" / "llamafactory-nsllm" / "trainer_log.jsonl",
               FIXTURES / "runs" / "detectron2-maskrcnn" / "output" / "metrics.json",
               *sorted((FIXTURES / "population" / "rl").glob("rl-*-00[0-1]/metrics.jsonl"))]


@pytest.mark.parametrize("fmt, files, module", [
    ("tfevents", EVENT_FILES, "trainlint.readers.tfevents"), ("csv", CSV_FILES, "trainlint.readers.csv_log"),
    ("jsonl", JSONL_FILES, "trainlint.readers.jsonl")])
def test_both_paths_read_damaged_copies_of_real_logs_identically(fmt: str, files: list[Path], module: str,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Bit flips (CRC failures, broken varints and UTF-8, quotes and odd cells), cut tails (partial records),
    copied spans (duplicate records and steps, out-of-order steps) and dropped spans of the gallery's real files:
    each read by both paths gives the same series, events, problems and facts."""
    reason = _compiled_reason(fmt)
    if reason is not None:
        pytest.skip(reason)
    assert len(files) >= 4, files
    rnd = random.Random(28)
    compared = 0
    for src in files:
        raw = src.read_bytes()
        for what, data in _mutants(raw, rnd, 12) + (_reframed(raw, rnd, 12) if fmt == "tfevents" else []):
            p = tmp_path / src.name
            p.write_bytes(data)
            a, b = _read_both(p, fmt, module, monkeypatch)
            _same_reading(a, b, f"{src} {what}")
            compared += 1
    print(f"{fmt}: {compared} damaged copies of {len(files)} files compared")


def _jsonl_value(line: str) -> tuple[int, bytes, object] | None:
    """(kind, the double the series take, the value as json.loads gives it) of key "x" on one line read by the
    compiled JSONL scanner, or None when it leaves the line to json.loads."""
    from trainlint.core import accel

    got = accel.CJSONL.columns([line])
    if got is None:
        return None
    keys, kinds, values, others = got
    i = keys.index("x")
    return kinds[i][0], values[i], accel.CJSONL.objects(kinds[i], values[i], others[i], None)[0]


JSON_NUMBER = r"-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,5})?"


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
    st.floats(width=32).filter(lambda x: x == x and abs(x) != float("inf")).map(lambda x: repr(float(x))),
    st.floats(allow_nan=False, allow_infinity=False).flatmap(
        lambda x: st.sampled_from(["%.3g", "%.6f", "%.16g", "%.17g", "%.4e", "%.15e", "%.0f"]).map(lambda f: f % x)),
    st.integers(min_value=-10 ** 20, max_value=10 ** 20).map(str),
    st.from_regex(JSON_NUMBER, fullmatch=True),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "-NaN", "nan", "inf", "-0", "-0.0", "0e0", "-0E-0", "1.", "01"]),
    st.text(alphabet="0123456789+-.eE naNINfity", max_size=12)))
def test_a_jsonl_number_is_the_value_json_loads_reads_or_left_to_it(literal: str) -> None:
    """Every number the JSONL scanner reads is the value json.loads gives, of the same type, bit for bit (an
    integer literal is an int, -0 is 0; any other literal is float() of its text, sign of zero included; NaN,
    Infinity, -Infinity are json's constants); a literal json.loads refuses, or one the scanner is not sure of, is
    left to json.loads."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    line = '{"step": 1, "x": ' + literal + "}"
    got = _jsonl_value(line)
    if got is None:
        return
    expected = json.loads(line)["x"]  # raises if the scanner read what json.loads refuses
    kind, double, value = got
    assert type(value) is type(expected) and kind == (1 if type(expected) is int else 2), literal
    assert double == struct.pack("=d", float(expected)), literal  # what array("d") holds on the pure path
    assert struct.pack("<d", value) == struct.pack("<d", expected), literal
    assert value == expected or (value != value and expected != expected), literal


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10 ** 17, max_value=10 ** 17), st.floats(),
    st.text(max_size=8), st.lists(st.integers(), max_size=2)), max_size=6),
    st.booleans(), st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
    st.tuples(*[st.text(alphabet=" \t\x0b\x0c\r\x1c\x1f\x85\u3000a", max_size=3)] * 2))
def test_a_jsonl_line_is_the_object_json_loads_reads_or_left_to_it(obj: dict, ascii_only: bool,
                                                                      seps: tuple[str, str],
                                                                      pad: tuple[str, str]) -> None:
    """A line the JSONL scanner reads gives the keys, in their order, and the values (type and bits) json.loads
    gives for the line str.strip() leaves (the scanner strips it itself); escapes, non-ASCII text and nested
    values are left to json.loads."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    from trainlint.core import accel

    line = pad[0] + json.dumps(obj, ensure_ascii=ascii_only, separators=seps) + pad[1]
    got = accel.CJSONL.columns([line])
    if got is None:
        return
    keys, kinds, values, others = got
    read = {k: accel.CJSONL.objects(kd, vs, os_, None)[0] for k, kd, vs, os_ in zip(keys, kinds, values, others,
                                                                                       strict=True)}
    expected = json.loads(line.strip())  # raises if the scanner read what json.loads refuses
    assert list(read) == list(expected), line
    for k, v in expected.items():
        assert type(read[k]) is type(v) and repr(read[k]) == repr(v), (line, k)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.text(alphabet=" \t\n\x0b\x0c\r\x1c\x1d\x1f\x85\xa0\u2028\u3000\u200b{}a", max_size=4),
                max_size=5))
def test_no_blank_is_every_line_kept_by_strip(lines: list[str]) -> None:
    """The scanner's blank-line test is str.strip()'s (ASCII and Unicode whitespace alike): a line it calls
    non-blank is one the reader keeps, so the batches and their line numbers are the Python path's."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    from trainlint.core import accel

    assert accel.CJSONL.no_blank(lines) is all(line.strip() for line in lines), lines


def test_a_growing_jsonl_log_cut_mid_line_is_read_identically(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A growing real JSONL log, appended in pieces that end mid-line (the partial last line is read
    provisionally, then taken back): both paths give the same series, events, problems and facts after every
    piece."""
    import importlib

    from trainlint.readers import open_source

    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    module = importlib.import_module("trainlint.readers.jsonl")
    compared = 0
    for src in JSONL_FILES:
        data = src.read_bytes()
        cuts = sorted({0, len(data)} | {len(data) * k // 9 + 7 * k for k in range(1, 9)})
        tails = []
        for pure in (False, True):
            dst = tmp_path / f"{int(pure)}-{src.name}"
            dst.write_bytes(b"")
            tails.append(open_source(str(dst), "jsonl"))
        for a, b in itertools.pairwise(cuts):
            for pure, tail in zip((False, True), tails, strict=True):
                with open(tail.path, "ab") as f:
                    f.write(data[a:b])
                with monkeypatch.context() as m:
                    if pure:
                        m.setattr(module, "CJSONL", None)
                    tail.update()
            _same_reading(tails[0].log, tails[1].log, f"{src} cut at {b}")
            compared += 1
    print(f"jsonl: {compared} pieces of {len(JSONL_FILES)} growing files compared")
