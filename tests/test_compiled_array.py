"""The compiled array room (``_carray``, ``_croom.h``): a series' arrays grow by doubling, with their points as they
were, and nothing is reserved where the items must not move.

Why: CPython's array grows by a sixteenth, so a series read a chunk at a time was copied about 17 times its size
on its way to its last point (10-12% of the compiled Coqui and CSV reads of 100 MB logs under `perf`). The room is
given by writing two fields of CPython's array struct, checked at import against what the array reports through
its public interfaces; these tests hold each refusal and the reads that use it.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from itertools import pairwise
from pathlib import Path

import pytest

from trainlint.core import accel
from trainlint.readers import base, open_source

CARRAY = accel.CARRAY
needs_carray = pytest.mark.skipif(CARRAY is None, reason=f"compiled array room: {accel.CARRAY_REASON}")


@needs_carray
def test_this_cpythons_array_is_the_layout_checked() -> None:
    """Without this, a layout check that failed would only make the reads slower, silently."""
    assert CARRAY.REFUSED == ""


@needs_carray
@pytest.mark.parametrize("code", ["d", "I", "q", "H"])
def test_room_is_reserved_and_the_items_stay(code: str) -> None:
    a = array(code, range(100))
    address = a.buffer_info()[0]
    assert CARRAY.reserve(a, 1000) is True
    assert CARRAY.room(a) == 1000 and len(a) == 100 and a.tolist() == list(range(100))
    assert a.__sizeof__() == array(code).__sizeof__() + 1000 * a.itemsize  # the array's own count of its room
    address = a.buffer_info()[0]
    for k in range(900):  # appends and extends within the room move nothing
        a.append(k) if k % 2 else a.extend(array(code, [k]))
    assert a.buffer_info()[0] == address and CARRAY.room(a) == 1000
    assert a.tolist() == list(range(100)) + list(range(900))
    assert CARRAY.reserve(a, 1001) is True and CARRAY.room(a) == 2000  # doubled when it grows
    assert CARRAY.reserve(a, 10_000) is True and CARRAY.room(a) == 10_000  # or to what is asked, when more
    assert CARRAY.reserve(a, 5) is True and CARRAY.room(a) == 10_000  # never shrunk
    del a[10:]  # the array's own shrink takes the room back, as it would have
    assert a.tolist() == list(range(10)) and CARRAY.room(a) < 100


@needs_carray
def test_nothing_is_reserved_where_the_items_must_not_move() -> None:
    a = array("d", [1.0, 2.0])
    view = memoryview(a)  # an exported buffer: moving the items would leave the view on freed memory
    assert CARRAY.reserve(a, 1000) is False and CARRAY.room(a) == 2 and view[1] == 2.0
    view.release()
    assert CARRAY.reserve(a, 1000) is True

    class Sub(array):  # another type may keep other fields after the array's
        pass

    s = Sub("d", [1.0])
    assert CARRAY.reserve(s, 1000) is False and CARRAY.room(s) == -1 and s.__sizeof__() < 1000
    assert CARRAY.reserve([1.0], 1000) is False and CARRAY.room(b"x") == -1
    assert CARRAY.reserve(array("d"), 2**62) is False  # past what can be asked for: the extend fails as it would
    with pytest.raises(TypeError):
        CARRAY.reserve(a, "1000")


# ---- the reads: a series read a chunk at a time moves a few times, not at every chunk ------------------------


def _hf_stdout(path: Path, n: int) -> None:
    r = random.Random(5)
    lines = []
    for i in range(1, n + 1):
        lines.append(json.dumps({"loss": round(r.uniform(0.1, 3), 4), "grad_norm": round(r.uniform(0.1, 9), 4),
                                 "learning_rate": 5e-05, "epoch": round(i / n, 4)}).replace('"', "'"))
    path.write_text("\n".join(lines) + "\n")


def _hf_stdout_bars(path: Path, n: int) -> None:
    """As transformers 5.x prints them: tqdm's redraws (lone \\r) before each dict, its values quoted."""
    r = random.Random(9)
    out = []
    for i in range(1, n + 1):
        bar = "".join(f"\r{100 * k // (5 * n):3d}%|          | {k}/{5 * n} [00:00<00:00, 9.50it/s]"
                      for k in range(5 * i - 4, 5 * i + 1))
        out.append(f"{bar}\r{' ' * 48}\r{{'loss': '{r.uniform(0.1, 3):.4g}', 'grad_norm': '{r.uniform(0.1, 9):.4g}', "
                   f"'learning_rate': '0.04', 'epoch': '{i / n * 3:.4g}'}}")
    path.write_text("\n".join(out) + "\n")


def _csv(path: Path, n: int) -> None:
    r = random.Random(6)
    rows = ["step,train_loss,lr"] + [f"{i},{r.uniform(0.1, 3):.5f},{1e-3:.6g}" for i in range(1, n + 1)]
    path.write_text("\n".join(rows) + "\n")


def _jsonl(path: Path, n: int) -> None:
    r = random.Random(7)
    path.write_text("".join(json.dumps({"step": i, "loss": r.uniform(0.1, 3)}) + "\n" for i in range(1, n + 1)))


def _coqui(path: Path, n: int) -> None:
    r = random.Random(8)
    out = [" > Training Environment:", " > EPOCH: 0/1", " --> TIME: 2024-01-01 00:00:00 -- STEP: 0/0 -- GLOBAL_STEP: 0"]
    for i in range(1, n + 1):
        out.append(f"   --> TIME: 2024-01-01 00:00:{i % 60:02d} -- STEP: {i}/{n} -- GLOBAL_STEP: {i}")
        out.append(f"     | > loss: {r.uniform(0.1, 3):.5f}  ({r.uniform(0.1, 3):.5f})")
    path.write_text("\n".join(out) + "\n")


@needs_carray
@pytest.mark.parametrize(("fmt", "name", "make", "key"), [
    ("text", "train.log", _hf_stdout, "loss"),
    ("text", "train.log", _hf_stdout_bars, "loss"),
    ("csv", "metrics.csv", _csv, "train_loss"),
    ("jsonl", "metrics.jsonl", _jsonl, "loss"),
    ("coqui", "trainer_0_log.txt", _coqui, "loss"),
])
def test_a_series_read_a_chunk_at_a_time_moves_a_few_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             fmt: str, name: str, make: object, key: str) -> None:
    """Read in 8 KB chunks, a series' values array changes its room at each doubling only: log2 of its last size
    over its first. Grown by array.array's sixteenth (the room not asked for), it changed at every chunk after
    the first few; the stdout reader's compiled pass appends to the arrays itself, the others through
    Series.extend."""
    path = tmp_path / name
    make(path, 20_000)  # type: ignore[operator]
    monkeypatch.setattr(base, "CHUNK", 8 << 10)
    source = open_source(str(path), fmt)
    scan, rooms, chunks = source.reader.scan, [], [0]

    def watched(text: str, first_line: int) -> None:
        scan(text, first_line)
        chunks[0] += 1
        series = [s for s in source.log.series.values() if s.name == key]
        if series and len(series[0].values):
            rooms.append(CARRAY.room(series[0].values))

    monkeypatch.setattr(source.reader, "scan", watched)
    source.update()
    values = next(s for s in source.log.series.values() if s.name == key).values
    assert len(values) >= 19_000 and chunks[0] >= 40, (len(values), chunks[0])
    moves = sum(1 for a, b in pairwise(rooms) if a != b)
    doublings = math.log2(len(values) / rooms[0])  # from the first chunk's room to the last point
    assert moves <= doublings + 2, f"the room changed {moves} times over {chunks[0]} chunks: {rooms}"
    assert rooms[-1] >= len(values)
