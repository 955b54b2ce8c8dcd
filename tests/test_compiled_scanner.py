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
import math
import os
import random
import re
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
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


def pow10_rows() -> list[tuple[int, int, int]]:
    """(q, low, high) for q in -342..308: the top 128 bits of 10^q, rounded down, normalised so the high half has its
    top bit set: what core/_cpow10.h must hold for Eisel-Lemire's reader."""
    rows = []
    for q in range(-342, 309):
        if q >= 0:
            m = 5 ** q
            m = m << max(0, 128 - m.bit_length()) >> max(0, m.bit_length() - 128)
        else:
            p5 = 5 ** -q
            m = (1 << (p5.bit_length() + 127)) // p5  # 2^k / 5^-q with k chosen for 128 bits
            m = m if m.bit_length() == 128 else (1 << (p5.bit_length() + 128)) // p5
        rows.append((q, m & (2 ** 64 - 1), m >> 64))
    return rows


def test_the_power_of_ten_table_is_the_exact_powers_rounded_down() -> None:
    """core/_cpow10.h holds, for every power of ten from 1e-342 to 1e308, its 128-bit mantissa rounded down: a
    wrong row would give a wrong double for every number of that exponent that the random cells below miss."""
    text = (ROOT / "server" / "trainlint" / "core" / "_cpow10.h").read_text()
    held = [(int(q), int(lo, 16), int(hi, 16)) for lo, hi, q in
            re.findall(r"\{0x([0-9A-F]{16})u, 0x([0-9A-F]{16})u\},  /\* 1e(-?\d+) \*/", text)]
    assert held == pow10_rows()


def _long_cells(rnd: random.Random, n: int) -> list[str]:
    """Numbers of 17 to 19 significant digits (Eisel-Lemire's, past Clinger's 2^53) as writers print them: float32
    values as doubles, float32 values in full (exact dyadic decimals: _cfloat.h's exact_dyadic), %.17g, 19 random
    digits at any exponent, and the cases its checks exist for: halfway between two doubles, just off halfway,
    next to a power of two, the largest double, the smallest normal one, subnormals, overflows."""
    cells = []
    for k in range(n):
        how = k % 7
        if how == 0:
            cells.append(repr(float(struct.unpack("<f", struct.pack("<I", rnd.getrandbits(32)))[0])))
        elif how == 1:
            cells.append(f"{struct.unpack('<d', struct.pack('<Q', rnd.getrandbits(64)))[0]:.17g}")
        elif how == 2:
            digits = str(rnd.randrange(10 ** 16, 10 ** 19))
            cells.append(f"{'-' if k % 4 == 2 else ''}{digits[:1]}.{digits[1:]}e{rnd.randint(-345, 310)}")
        elif how == 3:  # a float32 value in full, its exact decimal (1410.0533447265625 = 11550757 / 2^13), or an
            # integer of 54-56 bits over 2-8: a dyadic decimal that is not a double
            wide = k % 3 == 0
            q = rnd.getrandbits(rnd.randint(54, 56) if wide else rnd.randint(1, 24)) | 1
            text = format(Decimal(q) / Decimal(2 ** rnd.randint(1 if wide else 0, 3 if wide else 30)), "f")
            cells.append(text if k % 4 else "-" + text)
        else:  # an exact halfway point between two doubles (as many digits as it takes), then cut or nudged
            x = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(63)))[0]
            if x != x or x in (float("inf"), 0.0):
                x = 1.0
            half = (Decimal(x) + Decimal(math.nextafter(x, math.inf))) / 2
            text = f"{half:.40e}".replace("e+", "e")
            mant, exp = text.split("e")
            digits = mant.replace(".", "").rstrip("0") or "0"
            cut = digits[:rnd.randint(17, 19)]
            if how == 4:
                cut = str(int(cut) + rnd.choice([-1, 1]))
            e = int(exp) - (len(cut) - 1)
            cells.append(f"{cut}e{e}")
    return [*cells, "9007199254740993", "9007199254740993.0", "18446744073709551615", "9999999999999999999",
                    "1.7976931348623157e308", "1.7976931348623159e308", "2.2250738585072014e-308",
                    "2.2250738585072011e-308", "4.9406564584124654e-324", "1e-342", "1e-343", "1e308", "1e309",
                    "0.30000000000000001665", "-0.0000000000000000000", "123456789012345678e-360"]


def test_a_long_cell_is_the_double_float_reads() -> None:
    """60,000 cells of 17 to 19 significant digits (_long_cells): each is float()'s double, bit for bit, whichever
    of the scanner's readers took it (Eisel-Lemire's; PyOS_string_to_double for a subnormal, an overflow, a
    halfway point Eisel-Lemire cannot tell)."""
    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    rnd = random.Random(2028)
    read = 0
    for cell in _long_cells(rnd, 60000):
        values, stop = _csv_column([cell])
        if stop == 0:
            continue
        read += 1
        assert struct.pack("<d", values[0]) == struct.pack("<d", float(cell)), cell
    assert read == 60016, read  # every cell is a number float() reads: none is left to csv.reader


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


def _both_read_alike(copies: Iterable[tuple[Path, str, bytes]], fmt: str, module: str, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch, context: str = "") -> int:
    """Each (source, what was done to it, bytes) written where its source's name says and read by both paths
    (_read_both): the same series, events, problems and facts. Returns how many were compared."""
    compared = 0
    for src, what, data in copies:
        p = tmp_path / src.name
        p.write_bytes(data)
        a, b = _read_both(p, fmt, module, monkeypatch)
        _same_reading(a, b, f"{src} {what}{context}")
        compared += 1
    return compared


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
    copies = ((src, what, data) for src in files for raw in [src.read_bytes()]
              for what, data in _mutants(raw, rnd, 12) + (_reframed(raw, rnd, 12) if fmt == "tfevents" else []))
    compared = _both_read_alike(copies, fmt, module, tmp_path, monkeypatch)
    print(f"{fmt}: {compared} damaged copies of {len(files)} files compared")


def _framed(payload: bytes) -> bytes:
    """One TFRecord: the length, its masked CRC, the payload, its masked CRC."""
    from trainlint.readers.tfevents import masked_crc

    head = struct.pack("<Q", len(payload))
    return head + struct.pack("<I", masked_crc(head)) + payload + struct.pack("<I", masked_crc(payload))


def _edited_events(data: bytes, rnd: random.Random) -> list[tuple[str, bytes]]:
    """A real event file with records edited, each framed with valid CRCs, where the pure reader's run of plain
    scalar records must stop or read exactly what the protobuf reads: a format-1 file (an out-of-order step purges)
    with records moved back, a plain event with a field after its value, a tag that is not UTF-8, steps of 2^56
    (a 9-byte varint), 2^56 - 1 (8 bytes) and 2^21 + 5 (4), a negative step, step 0 (not written), an empty tag,
    a second value, and 300 tags (each
    tag's records found one by one) or 12 tags logged out of step (found by translate and compress); a plain
    event followed, inside its record, by the 4 bytes of its own CRC (a record the header's length alone tells
    from a plain one)."""
    from tensorboard.compat.proto import event_pb2

    from trainlint.readers.tfevents import masked_crc

    recs = _records(data)
    events = [event_pb2.Event.FromString(r[12:-4]) for r in recs]
    plain = [i for i, ev in enumerate(events) if ev.WhichOneof("what") == "summary" and len(ev.summary.value) == 1
             and ev.summary.value[0].WhichOneof("value") == "simple_value" and ev.step > 0]
    if not plain:
        return []
    out = []
    v1 = [_framed(event_pb2.Event(wall_time=ev.wall_time, file_version="brain.Event:1").SerializeToString())
          if ev.WhichOneof("what") == "file_version" else r for r, ev in zip(recs, events, strict=True)]
    for what, moved in _reframed(b"".join(v1), rnd, 6):
        out.append((f"format 1, {what}", moved))

    def edited(what: str, i: int, payload: bytes) -> None:
        out.append((f"{what} at record {i}", b"".join([*recs[:i], _framed(payload), *recs[i + 1:]])))

    for what in ("field after", "its crc after", "not utf-8", "step 2^56", "step 2^56 - 1", "step 2^21 + 5",
                 "negative step", "step 0", "empty tag", "two values"):
        i = rnd.choice(plain)
        ev = event_pb2.Event()
        ev.CopyFrom(events[i])
        payload = ev.SerializeToString()
        if what == "field after":
            payload += b"\x78\x01"  # field 15, a varint: unknown to the Event, skipped by the protobuf
        elif what == "its crc after":  # a plain event's CRC where the record's would be, then more of the record
            payload += struct.pack("<I", masked_crc(payload))
        elif what == "not utf-8":
            tag = ev.summary.value[0].tag.encode()
            payload = payload.replace(tag, tag[:-1] + b"\xff")
        else:
            if what.startswith("step") or what == "negative step":
                ev.step = {"step 2^56": 2 ** 56, "step 2^56 - 1": 2 ** 56 - 1, "step 2^21 + 5": 2 ** 21 + 5,
                           "negative step": -3, "step 0": 0}[what]
            elif what == "empty tag":
                ev.summary.value[0].tag = ""
            else:
                ev.summary.value.add(tag="second", simple_value=1.5)
            payload = ev.SerializeToString()
        edited(what, i, payload)
    base = events[plain[0]]
    for n, tags in (("300 tags", [f"t{j}" for j in range(300)]), ("12 tags out of step", [f"u{j % 12}" for j in
                                                                                           range(40)])):
        extra = []
        for j, tag in enumerate(tags):
            ev = event_pb2.Event(wall_time=base.wall_time + j, step=base.step + 1 + (j if "out" in n else j // 7))
            ev.summary.value.add(tag=tag, simple_value=float(j))
            extra.append(_framed(ev.SerializeToString()))
        if "out" in n:
            rnd.shuffle(extra)
        out.append((n, b"".join([*recs, *extra])))
    return out


def test_both_paths_read_edited_event_records_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gallery's event files with records edited where the pure reader's run of plain scalar records must stop
    (or must read the record exactly as the protobuf does, _edited_events): both paths give the same series,
    events, problems and facts."""
    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    rnd = random.Random(2812)
    copies = ((src, what, data) for src in EVENT_FILES for what, data in _edited_events(src.read_bytes(), rnd))
    compared = _both_read_alike(copies, "tfevents", "trainlint.readers.tfevents", tmp_path, monkeypatch)
    print(f"tfevents: {compared} edited copies of {len(EVENT_FILES)} files compared")
    assert compared >= 108, compared  # 6 of the gallery's files hold plain scalar events, 18 copies each


def test_the_pure_reader_reads_plain_scalar_records_in_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure reader's run of plain records (TensorBoardTail._plain) takes every plain scalar event of the
    gallery's event files (one value, a step past 0) but the one a file may hold before its first scalars place it:
    a check that fails without the run (a CRC masked wrong, a varint misread) sends each record back to the
    protobuf, the same reading at five times the cost."""
    import importlib

    from tensorboard.compat.proto import event_pb2

    tfevents = importlib.import_module("trainlint.readers.tfevents")
    from trainlint.readers import read

    if tfevents._CRC_VALUE is None:
        pytest.skip("google_crc32c's C implementation is not installed")
    monkeypatch.setattr(tfevents, "CSCAN", None)
    taken = []
    take = tfevents.TensorBoardTail._take
    monkeypatch.setattr(tfevents.TensorBoardTail, "_take",
                        lambda self, fs, run, groups, cols: (taken.append(len(cols[0])), take(self, fs, run, groups,
                                                                                                 cols))[1])
    total = 0
    for src in EVENT_FILES:
        events = [event_pb2.Event.FromString(r[12:-4]) for r in _records(src.read_bytes())]
        plain = sum(ev.WhichOneof("what") == "summary" and len(ev.summary.value) == 1 and ev.step > 0 and
                    ev.summary.value[0].WhichOneof("value") == "simple_value" for ev in events)
        taken.clear()
        read(str(src), "tfevents")
        assert plain - 1 <= sum(taken) <= plain, (src, plain, sum(taken))
        total += sum(taken)
    assert total >= 798, total  # the add_scalars and tensorboardX runs' 800 plain records, 2 read before placed


def test_a_run_cut_short_again_and_again_matches_each_record_a_few_times(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """6,000 plain records of one tag at one step (a resumed run logging its steps again: each a duplicate the run
    must leave to _summary), then 6,000 past it: both paths read them identically, and the pure reader's regular
    expression matches 1.5 records a record at most (a run cut short at its first record matched up to 8,192 it did
    not take, on every record: 3.9 M matches; tried again on the next record, 38,182)."""
    import importlib

    from tensorboard.compat.proto import event_pb2

    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    tfevents = importlib.import_module("trainlint.readers.tfevents")
    records = [_framed(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())]
    for j in range(12000):
        ev = event_pb2.Event(wall_time=2.0 + j, step=7 if j < 6000 else j)
        ev.summary.value.add(tag="loss", simple_value=float(j))
        records.append(_framed(ev.SerializeToString()))
    p = tmp_path / "events.out.tfevents.1.host"
    p.write_bytes(b"".join(records))
    matched = [0]

    class Counting:  # the pattern's scanner, its matches counted
        def scanner(self, buf: bytes, pos: int) -> object:
            inner = plain.scanner(buf, pos)

            class Scanner:
                def match(self) -> object:
                    m = inner.match()
                    matched[0] += m is not None
                    return m
            return Scanner()

    plain = tfevents._plain_re()
    monkeypatch.setattr(tfevents, "_plain_re", Counting)
    a, b = _read_both(p, "tfevents", "trainlint.readers.tfevents", monkeypatch)
    _same_reading(a, b, "12,000 records, 6,000 duplicates")
    assert sum(map(len, b.series.values())) == 12000
    print(f"tfevents: {matched[0]} records matched for 12,000")
    assert 0 < matched[0] <= 1.5 * 12000, matched[0]  # 17,185: 8,192 by the first run (cut at its 2nd), then 4 in 9


def test_the_lanes_are_the_values_one_at_a_time() -> None:
    """_masked_all is _masked of each CRC and _varints each varint's value, over every lane width they meet."""
    from trainlint.readers.tfevents import _masked, _masked_all, _varints

    rnd = random.Random(56)
    crcs = [0, 0xFFFFFFFF, 0x80000000, 0x7FFF, 0x8000, *(rnd.getrandbits(32) for _ in range(3000))]
    assert list(_masked_all(crcs)) == [_masked(c) for c in crcs]
    values = [0, 1, 127, 128, 2 ** 14 - 1, 2 ** 14, 2 ** 56 - 1, *(rnd.getrandbits(rnd.randint(1, 56))
                                                                      for _ in range(3000))]

    def varint(v: int) -> bytes:
        out = bytearray()
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        return bytes(out + bytes([v]))

    assert list(_varints([varint(v) for v in values])) == values
    assert list(_varints([b"\x80\x00", b"\xff\x80\x00"])) == [0, 127]  # longer than they need: the same values


# What a CSV chunk's text can hold that the compiled scanner must leave to csv.reader, or read as it does: quotes
# (a quoted cell holding a line break), a lone "\r" (a break the LSP counts), "\r\n" and "\n" mixed, blank and
# blank-celled lines, padded, odd or empty cells, a row longer or shorter than the header.
CSV_PIECES = ['"', '"a\nb"', '""', "\r", "\r\n", "\n", "\n\n", " ", "\t", ",", ",,", "nan", "inf", "-0", "1e5",
              "1_0", "x", " 7 ", "0x1", "\x0c", "\x1f", "1.0000000000000000001", "\r\r\n"]


def _edited_csv(data: bytes, rnd: random.Random) -> bytes:
    """A real ASCII CSV with 1-6 of CSV_PIECES inserted, or one of its lines replaced, at random places."""
    text = data.decode()
    for _ in range(rnd.randint(1, 6)):
        at = rnd.randrange(len(text) + 1)
        if rnd.random() < 0.2:  # a whole line of pieces
            at = text.rfind("\n", 0, at) + 1
            text = text[:at] + "".join(rnd.choices(CSV_PIECES, k=rnd.randint(1, 5))) + "\r\n" + text[at:]
        else:
            text = text[:at] + rnd.choice(CSV_PIECES) + text[at:]
    return text.encode()


def test_both_paths_read_edited_ascii_csv_text_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled scanner walks an ASCII chunk's text itself (csv_text) and leaves a line to csv.reader, which
    reads the row from there as split_lines splits it: 1,200 copies of the gallery's real CSVs (CRLF Lightning and
    Keras logs, an SB3 progress.csv) and the corpus's sparse Lightning metrics.csv, each with quotes, lone "\r",
    mixed breaks, blank lines and odd cells inserted, read by both paths: the same series (line numbers included),
    events, problems and facts."""
    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    sources = [*CSV_FILES, *sorted(CORPUS.glob("csv_logs/0Xero7__*metrics.csv"))]
    rnd = random.Random(2028)
    compared = 0
    for src in sources:
        raw = src.read_bytes()[:20000]
        raw = raw[:raw.rfind(b"\n") + 1]
        assert raw.isascii(), src  # the text path's case
        for k in range(1200 // len(sources)):
            p = tmp_path / src.name
            p.write_bytes(_edited_csv(raw, rnd))
            a, b = _read_both(p, "csv", "trainlint.readers.csv_log", monkeypatch)
            _same_reading(a, b, f"{src} edit {k}: {p.read_bytes()!r}")
            compared += 1
    print(f"csv: {compared} edited copies of {len(sources)} files compared")


def test_a_growing_csv_log_cut_anywhere_is_read_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A growing real CSV appended in pieces cut anywhere (mid-line, between "\r" and "\n", inside the header):
    each piece is a chunk of its own, the scanner starts at its first line (the header read, or not yet) and the
    partial last line is read provisionally, then taken back; both paths give the same reading after every piece.
    Each file twice: as written, and with a non-ASCII cell mid-file (ASCII pieces read from their text, the piece
    holding it from its list of lines, one reader's state across both)."""
    import importlib

    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    module = importlib.import_module("trainlint.readers.csv_log")
    rnd = random.Random(28)
    compared = 0
    for src in CSV_FILES:
        raw = src.read_bytes()
        mid = raw.index(b"\n", len(raw) // 2) + 1
        # and again with a non-ASCII cell mid-file: the pieces before and after it are ASCII text (csv_text), the
        # piece holding it goes through the list path (csv_rows)
        for data in (raw, raw[:mid] + "\u00b5".encode() + raw[mid:]):
            cuts = sorted({0, len(data), *(rnd.randrange(len(data)) for _ in range(12)),
                           *[i for i in range(len(data)) if data[i:i + 1] == b"\r"][:3]})
            compared += _grow_both(src, data, cuts, tmp_path, module, monkeypatch)
    print(f"csv: {compared} pieces of {len(CSV_FILES)} growing files compared")


def test_a_growing_event_file_cut_anywhere_is_read_identically(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A growing real event file appended in pieces cut anywhere (inside a header, a payload, a CRC): each update
    frames the complete records from where the last one stopped (the pure reader's run of plain records ends at
    the partial one) and reports the partial record provisionally; both paths give the same reading after every
    piece."""
    import importlib

    if _compiled_reason() is not None:
        pytest.skip(_compiled_reason())
    module = importlib.import_module("trainlint.readers.tfevents")
    rnd = random.Random(2028)
    compared = 0
    for src in EVENT_FILES:
        data = src.read_bytes()
        cuts = sorted({0, len(data), *(rnd.randrange(len(data)) for _ in range(12))})
        compared += _grow_both(src, data, cuts, tmp_path, module, monkeypatch, "tfevents")
    print(f"tfevents: {compared} pieces of {len(EVENT_FILES)} growing files compared")
    assert compared >= 12 * len(EVENT_FILES), compared


def _grow_both(src: Path, data: bytes, cuts: list[int], tmp_path: Path, module: object,
               monkeypatch: pytest.MonkeyPatch, fmt: str = "csv", attr: str = "CSCAN") -> int:
    """``data`` appended in pieces (ending at ``cuts``) to two growing files, each read after every piece, one by the
    compiled path and one by the pure path (``module.attr`` set to None), and compared: the pieces compared."""
    from trainlint.readers import open_source

    tails = []
    for pure in (False, True):
        dst = tmp_path / f"{int(pure)}" / src.name  # the same name: an event file's problems name it
        dst.parent.mkdir(exist_ok=True)
        dst.write_bytes(b"")
        tails.append(open_source(str(dst), fmt))
    for a, b in itertools.pairwise(cuts):
        for pure, tail in zip((False, True), tails, strict=True):
            with open(tail.path, "ab") as f:
                f.write(data[a:b])
            with monkeypatch.context() as m:
                if pure:
                    m.setattr(module, attr, None)
                tail.update()
        _same_reading(tails[0].log, tails[1].log, f"{src} cut at {b}")
    return len(cuts) - 1


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


def test_a_long_jsonl_number_is_the_double_json_loads_reads() -> None:
    """_long_cells' numbers of 17 to 19 significant digits that JSON's grammar allows: each is json.loads's double,
    bit for bit, through the fast readers (_cfloat.h's fast_double: Clinger, exact dyadic, Eisel-Lemire) or
    PyOS_string_to_double."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    grammar = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
    read = 0
    for cell in _long_cells(random.Random(2029), 60000):
        if not grammar.fullmatch(cell) or not set(cell) & set(".eE"):  # a long integer literal is json.loads's int
            continue
        got = _jsonl_value('{"step": 1, "x": ' + cell + "}")
        assert got is not None, cell  # a plain number: never left to json.loads
        expected = json.loads(cell)
        assert struct.pack("<d", got[2]) == struct.pack("<d", expected), cell
        read += 1
    assert read > 40000, read


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


_LINE_PART = st.sampled_from([
    '{"step": 1, "loss": 0.5, "lr": 1e-05, "t": "0:03:29"}', '{"step": 2, "loss": null, "lr": 2.60072200469752e-11}',
    '{"step": 3, "ok": true, "epoch": 0.0}', '{"step": 4, "x": "nan", "y": -0}', '{"step":5,"loss":NaN}',
    '{"step": 6, "loss": [1]}', '{"step": 7, "t": "\\u00e9"}', '{"step": 8, "t": "\u00e9"}', "{}", "", "  ", "\x0c",
    '{"step": 9, "loss": 0.25}  ', ' {"epoch": 1, "total_steps": 9}', "not json", '{"step": 10, "step": 11}'])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(_LINE_PART, st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", ""])), max_size=12),
       st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=3))
def test_columns_text_reads_the_lines_columns_reads_in_place(parts: list[tuple[str, str]], most: int,
                                                            start: int) -> None:
    """The JSONL scanner reading a chunk's text where it is (columns_text) gives what columns() gives for the same
    lines split and stripped as the reader splits and strips them (split_lines, str.strip), with their line
    numbers and where they end; it reads nothing (None) when a line of the batch is blank or holds a carriage
    return (the reader's split reads those), so what it reads is always a range of lines. The keys the reader
    never reads a value of (``skip``) keep no strings or booleans, and odd_rows() is objects() where a line
    holds no number."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    from array import array

    from trainlint.core import accel
    from trainlint.core.lines import split_lines

    text = "".join(line + brk for line, brk in parts)
    pos = len(split_lines(text)[0]) + 1 if start and text and "\r" not in text.split("\n")[0] else 0
    skip = {"t", "epoch"}
    got = accel.CJSONL.columns_text(text, pos, 40, most, skip)
    if got is None:
        rest = split_lines(text[pos:])[:most]
        assert not rest or not all(line.strip() for line in rest) or "\r" in text[pos:] or \
            accel.CJSONL.columns([line.strip() for line in rest], skip) is None or not text.isascii(), text
        return
    end, numbers, table = got
    lines = split_lines(text[pos:end])
    assert lines == split_lines(text[pos:])[:most] and (end == len(text) or len(lines) == most), (text, end)
    assert "\r" not in text[pos:end] and all(line.strip() for line in lines), text
    assert list(array("I", numbers)) == list(range(40, 40 + len(lines)))
    assert table == accel.CJSONL.columns([line.strip() for line in lines], skip), text
    keys, kinds, values, others = table
    full = accel.CJSONL.columns(lines)
    for k, kd, vs, os_ in zip(keys, kinds, values, others, strict=True):
        assert (os_ is None) is (k in skip)
        objs = accel.CJSONL.objects(kd, vs, full[3][full[0].index(k)], None)
        odd = [(i, v) for i, v in enumerate(objs) if kd[i] not in (1, 2)]
        if os_ is not None:
            assert accel.CJSONL.odd_rows(kd, os_, None) == odd, text


def _series_number(line: bytes, literal: bytes) -> bytes:
    """``line`` with the first number of a key the reader makes a series of replaced by ``literal``."""
    from trainlint.readers.jsonl import NOT_SERIES

    for m in re.finditer(rb'"([^"]+)": (-?[0-9][0-9.eE+-]*)', line):
        if m.group(1).decode() not in NOT_SERIES:
            return line[:m.start(2)] + literal + line[m.end(2):]
    return line


def _jsonl_variants(data: bytes, rnd: random.Random) -> list[tuple[str, bytes]]:
    """A real JSONL log as it is and with one line changed where the compiled text scanner must stop and the split
    read it: a blank line, Windows line ends from there on, a lone carriage return, a non-ASCII character, a
    nested value, a line that is not JSON; and where the pure-Python columns must leave their quick checks: a
    series' number written as a boolean (``array("d")`` takes True as 1.0), the first line's null where the next
    lines have numbers (a column neither all numbers nor all null), a line holding its keys in another order or one
    key fewer (the batch's lines no longer share the first line's keys)."""
    lines = data.split(b"\n")
    out = [("as written", data)]
    for what in ("blank", "crlf", "lone cr", "non-ascii", "nested", "not json", "true", "false", "first null",
                 "reordered", "key left out"):
        k = rnd.randrange(1, max(2, len(lines) - 1))
        ls = list(lines)
        if what == "blank":
            ls.insert(k, b"   ")
        elif what == "crlf":
            ls[k:] = [line + b"\r" for line in ls[k:-1]] + ls[-1:]
        elif what == "lone cr":
            ls[k] = ls[k].replace(b", ", b",\r ", 1)
        elif what == "non-ascii":
            ls[k] = ls[k].replace(b"{", '{"note": "\u00e9t\u00e9", '.encode(), 1)
        elif what == "nested":
            ls[k] = ls[k].replace(b"{", b'{"nested": {"a": 1}, ', 1)
        elif what in ("true", "false"):
            ls[k] = _series_number(ls[k], what.encode())
        elif what == "first null":
            ls[0] = _series_number(ls[0], b"null")
        elif what == "reordered":
            ls[k] = json.dumps(dict(reversed(json.loads(ls[k]).items()))).encode()
        elif what == "key left out":
            obj = json.loads(ls[k])
            obj.pop(next(reversed(obj)))
            ls[k] = json.dumps(obj).encode()
        else:
            ls[k] = ls[k][: len(ls[k]) // 2]
        out.append((f"{what} at line {1 if what == 'first null' else k + 1}", b"\n".join(ls)))
    return out


@pytest.mark.parametrize("batch", [3, 7, 8192])
def test_jsonl_batches_the_text_scanner_leaves_are_read_identically(batch: int, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled scanner reads a chunk's batches in its text until one it must leave (a blank line, a carriage
    return, non-ASCII text, a line json.loads must read); the reader splits the rest and reads it from that
    batch on: with batches of 3, 7 and 8,192 lines (a switch inside the chunk, at a batch's first line, or
    none), every real JSONL log and its variants give both paths the same series, events, problems and facts."""
    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    import importlib

    monkeypatch.setattr(importlib.import_module("trainlint.readers.jsonl"), "BATCH", batch)
    rnd = random.Random(batch)
    copies = ((src, what, data) for src in JSONL_FILES for what, data in _jsonl_variants(src.read_bytes(), rnd))
    compared = _both_read_alike(copies, "jsonl", "trainlint.readers.jsonl", tmp_path, monkeypatch,
                                f", batches of {batch}")
    print(f"jsonl: {compared} variants of {len(JSONL_FILES)} files compared, batches of {batch}")


def test_a_growing_jsonl_log_cut_mid_line_is_read_identically(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A growing real JSONL log, appended in pieces that end mid-line (the partial last line is read
    provisionally, then taken back): both paths give the same series, events, problems and facts after every
    piece."""
    import importlib


    if _compiled_reason("jsonl") is not None:
        pytest.skip(_compiled_reason("jsonl"))
    module = importlib.import_module("trainlint.readers.jsonl")
    compared = 0
    for src in JSONL_FILES:
        data = src.read_bytes()
        cuts = sorted({0, len(data)} | {len(data) * k // 9 + 7 * k for k in range(1, 9)})
        compared += _grow_both(src, data, cuts, tmp_path, module, monkeypatch, "jsonl", "CJSONL")
    print(f"jsonl: {compared} pieces of {len(JSONL_FILES)} growing files compared")


# Lines the pure path's piece reading (JsonlReader._scan_flat) must read as json.loads reads each one, or leave to the
# split: a structure or a string carried into the next line, two objects on one line (the three, beside plain lines,
# decode to as many objects as lines; so do the last two, each line with one "{"), braces in strings, blank lines,
# whitespace around a line, carriage returns, what is not JSON whitespace after an object, an array, a comma left
# over, a boolean, NaN, non-ASCII text.
_EDGE_LINES = [
    '{{"step": {i}, "loss": {v}}}', '{{"step": {i}, "loss": {v}, "lr": 0.1}}', '{{"step": {i}, "loss": {v}}}',
    '{{"step": {i}, "a": [{{"b": 1}}\n{{"c": 2}}], "loss": {v}}}', '{{"step": {i}, "loss": {v}}}, {{"step": 0}}',
    '{{"step": {i}, "loss": "x}}\n{{y", "loss": {v}}}', '{{"step": {i}, "loss": {v}, "note": "}}"}}',
    '{{"step": {i}, "note": "{{", "loss": {v}}}', '{{"step": {i}, "note": "}}{{", "loss": {v}}}', "", "   ",
    '  {{"step": {i}, "loss": {v}}}\t ', '{{"step": {i}, "loss": {v}}}\r', '{{"step": {i},\r "loss": {v}}}',
    '{{"step": {i}, "loss": {v}}}\x0c', '{{"step": {i}, "loss": {v}}} x', '{{"step": {i}, "loss": {v}}},',
    '[{{"step": {i}, "loss": {v}}}]', '{{"step": {i}, "loss": true}}', '{{"step": {i}, "loss": NaN}}', "{{}}",
    '{{"step": {i}, "loss": {v}, "n": "\u00e9t\u00e9"}}', '{{"step": {i}, "loss": null}}', "7", '"{{}}"',
    '{{"step": {i}, "loss": {v}', '"step": {i}, "loss": {v}}}', '{{"step": {i}, "loss": [{v}]}}',
    '{{"step": {i}, "a": [1\n2], "loss": {v}}}, {{"step": 0}}', '{{"step": {i}, "s": "x\ny", "loss": {v}}}, {{}}',
]


# Texts whose lines each begin with "{" and end with "}" (or whose lines each hold one "{") and decode, the line breaks
# made commas, to as many objects as lines: not one object a line.
_MISREAD = ['{"step": 0, "a": [{"b": 1}\n{"c": 2}]}\n{"step": 3, "loss": 3.0}, {"step": 4, "loss": 4.0}\n',
            '{"step": 0, "s": "x}\n{y"}\n{"step": 3, "loss": 3.0}, {"step": 4, "loss": 4.0}\n',
            '{"step": 0, "a": [1\n2], "b": 1}, {"step": 1}\n{"step": 2, "loss": 2.0}',
            '{"step": 0, "loss": 1.0}\n{"step": 1, "a": [1\n2]}\n{"x": 1}, {"step": 2}\n{"step": 5}\n']


def _edge_text(rnd: random.Random, n: int) -> str:
    """``n`` lines, most plain, some of _EDGE_LINES, with or without a line break after the last."""
    lines = [(rnd.choice(_EDGE_LINES) if rnd.random() < 0.15 else _EDGE_LINES[0]).format(i=i, v=rnd.random())
             for i in range(n)]
    return "\n".join(lines) + ("\n" if rnd.random() < 0.7 else "")


def _pieces_counted(monkeypatch: pytest.MonkeyPatch, module: object) -> Counter:
    """The pieces the pure path took ("read") and left ("left") from here on."""
    seen: Counter = Counter()
    flat = module._flat_count

    def counted(text: str) -> int:
        n = flat(text)
        seen["read" if n else "left"] += 1
        return n

    monkeypatch.setattr(module, "_flat_count", counted)
    return seen


@pytest.mark.parametrize("batch, piece", [(3, 40), (7, 300), (8192, 1 << 19)])
def test_the_pure_jsonl_pieces_are_read_as_the_split_reads_their_lines(batch: int, piece: int, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure path reads a chunk's lines that are one object each without splitting it (_scan_flat), a piece at a
    time, and leaves a piece it cannot read so, with the rest of the chunk, to the split from the batch that piece
    begins: with batches of 3, 7 and 8,192 lines and pieces of 40 characters (most a line), 300 and 512 K, every
    real JSONL log, its variants, damaged copies and texts of edge lines (_EDGE_LINES) give the same series,
    events, problems and facts as the split alone reads."""
    import importlib

    from trainlint.readers import read

    module = importlib.import_module("trainlint.readers.jsonl")
    monkeypatch.setattr(module, "CJSONL", None)
    monkeypatch.setattr(module, "BATCH", batch)
    monkeypatch.setattr(module, "PIECE", piece)
    seen = _pieces_counted(monkeypatch, module)
    rnd = random.Random(batch * 31 + piece)
    cases = [(f"edge text {k}", _edge_text(rnd, rnd.randint(1, 60)).encode()) for k in range(150)]
    cases += [(f"misread {k}", text.encode()) for k, text in enumerate(_MISREAD)]
    for src in JSONL_FILES:
        raw = src.read_bytes()
        cases += [(f"{src} {what}", data) for what, data in _jsonl_variants(raw, rnd) + _mutants(raw, rnd, 8)]
    for what, data in cases:
        p = tmp_path / "metrics.jsonl"
        p.write_bytes(data)
        pieces = read(str(p), "jsonl")
        with monkeypatch.context() as m:
            m.setattr(module.JsonlReader, "_scan_flat", lambda self, text, line: (0, line))
            split = read(str(p), "jsonl")
        _same_reading(pieces, split, f"{what}, batches of {batch}, pieces of {piece}")
    assert seen["read"] > 100 and seen["left"] > 100, seen  # both ways were taken, many times
    print(f"jsonl: {len(cases)} texts read by pieces and by the split alike ({dict(seen)})")


def test_each_object_the_pure_jsonl_pieces_hand_on_is_its_line_as_json_loads_reads_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each object _scan_flat hands on is its own line's, as json.loads reads that line alone (stripped, as the
    split strips it), of the same types (repr: 1, 1.0 and True differ), at that line's number; the lines it
    leaves, from the first it left, are the rest of the text."""
    import importlib

    from trainlint.core.model import LogFile

    module = importlib.import_module("trainlint.readers.jsonl")
    monkeypatch.setattr(module, "CJSONL", None)
    monkeypatch.setattr(module, "BATCH", 5)
    monkeypatch.setattr(module, "PIECE", 120)
    seen = _pieces_counted(monkeypatch, module)
    rnd = random.Random(2029)
    handed = 0
    for text in [*_MISREAD, *(_edge_text(rnd, rnd.randint(1, 40)) for _ in range(400))]:
        lines = text.split("\n")
        reader = module.JsonlReader(LogFile(path="x.jsonl", format="jsonl"))
        got: list[tuple[int, dict]] = []
        reader._objects = lambda objs, numbers, got=got: got.extend(zip(numbers, objs, strict=True))
        pos, line = reader._scan_flat(text, 10)
        assert [n for n, _ in got] == list(range(10, line)), text  # every line up to the first left, in order
        assert pos == len("".join(f"{ln}\n" for ln in lines[:line - 10])) or pos == len(text) == sum(
            map(len, lines)) + len(lines) - 1, (text, pos, line)
        for n, obj in got:
            assert repr(obj) == repr(json.loads(lines[n - 10].strip())), (text, n)
        handed += len(got)
    assert handed > 1000 and seen["left"] > 100, (handed, seen)
