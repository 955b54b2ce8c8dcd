"""``SortedBlocks`` is, item for item, the sorted list that insort and ``del items[bisect_left(items, x)]`` make.

Why: TP-GRAD-SPIKE's median and spikes, the loader share's median and TP-STEP-CLIFF's medians and slowest interval
are read from windows over a whole series, which these blocks now hold (one sorted list moved half the series at
each insert: a re-judge that grew with the log). A block boundary that put an equal item on the other side, or a
delete that took the second of two equal items, would change a median's sign of zero or a spike's position, and
only for a long series. Each test drives blocks of 4 items (so every split and join happens in a few hundred
operations) and a plain list with the same operations, and compares the items, their bits, every index, both
bisections and every tail.
"""

from __future__ import annotations

import math
import random
import struct
from array import array
from bisect import bisect_left, bisect_right, insort
from typing import Any

import pytest

from trainlint.rules.stats import SortedBlocks, SortedWindow


def _bits(items: Any) -> list[Any]:
    return [struct.pack("<d", x) if isinstance(x, float) else (struct.pack("<d", x[0]), x[1]) for x in items]


def _same(blocks: SortedBlocks, model: list[Any]) -> None:
    assert _bits(blocks) == _bits(model)
    assert len(blocks) == len(model)
    assert all(len(b) <= 2 * blocks.BLOCK for b in blocks.blocks) and all(blocks.blocks)
    assert blocks.maxes == [b[-1] for b in blocks.blocks]
    for i in range(-len(model), len(model)):
        assert _bits([blocks[i]]) == _bits([model[i]])
    for i in range(len(model) + 1):
        assert _bits(blocks.tail(i)) == _bits(model[i:])
    for x in {*model, -1.0, 0.0, 99.0} if not model or isinstance(model[0], float) else model:
        assert blocks.bisect_left(x) == bisect_left(model, x)
        assert blocks.bisect_right(x) == bisect_right(model, x)
    with pytest.raises(IndexError):
        blocks[len(model)]


@pytest.mark.parametrize("seed", range(12))
def test_values_with_signed_zeros_insert_and_delete_as_a_list(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SortedBlocks, "BLOCK", 4)
    rnd = random.Random(seed)
    pool = [0.0, -0.0, 1.0, 2.5, -3.0, 1e-300, math.inf]
    start = sorted(rnd.choice(pool) for _ in range(rnd.choice([0, 3, 9, 40])))
    blocks, model = SortedBlocks(array("d", start)), list(start)
    held: list[float] = list(start)
    for step in range(400):
        if held and rnd.random() < 0.45:
            x = held.pop(rnd.randrange(len(held)))
            blocks.remove(x)
            del model[bisect_left(model, x)]
        else:
            x = rnd.choice(pool)
            held.append(x)
            blocks.add(x)
            insort(model, x)
        if step % 25 == 0 or len(model) < 6:
            _same(blocks, model)
    _same(blocks, model)
    assert all(isinstance(b, array) for b in blocks.blocks)  # 8 bytes a value, not a float object


@pytest.mark.parametrize("seed", range(6))
def test_value_position_pairs_insert_and_delete_as_a_list(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SortedBlocks, "BLOCK", 4)
    rnd = random.Random(seed)
    blocks, model = SortedBlocks([]), []
    for j in range(300):
        item = (rnd.choice([0.0, -0.0, 1.0, 7.0]), j)
        blocks.add(item)
        insort(model, item)
        if rnd.random() < 0.3:
            gone = model[rnd.randrange(len(model))]
            blocks.remove(gone)
            del model[bisect_left(model, gone)]
    _same(blocks, model)
    assert blocks.bisect_right((1.0, math.inf)) == bisect_right(model, (1.0, math.inf))
    assert blocks.bisect_left((7.0,)) == bisect_left(model, (7.0,))


def test_a_window_over_a_growing_series_is_the_flat_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windows the rules move (a start that moves forward, an end that grows or is cut back) hold what the flat
    window of the compiled slide holds, and give its median."""
    monkeypatch.setattr(SortedBlocks, "BLOCK", 4)
    rnd = random.Random(7)
    vals = array("d", [rnd.choice([0.0, -0.0, rnd.random(), 1.0]) for _ in range(2000)])
    blocked, flat = SortedWindow(), SortedWindow(flat=True)
    a = b = 0
    for _ in range(300):
        b = max(a + 1, min(len(vals), b + rnd.randint(-3, 12)))
        a = min(b - 1, a + rnd.randint(0, 4))
        blocked.move(vals, a, b)
        flat.move(vals, a, b)
        assert _bits(blocked.items) == _bits(flat.items)
        assert struct.pack("<d", blocked.upper_median()) == struct.pack("<d", flat.upper_median())
    assert isinstance(blocked.items, SortedBlocks) and isinstance(flat.items, array)
    assert len(blocked.items.blocks) > 10  # the window was many blocks, so their joins were compared


def test_an_insert_moves_one_block_not_the_window() -> None:
    """What the blocks are for: inserting in the middle of a window of 2^18 values changes one block of at most
    2 * BLOCK items; the others are the same objects, untouched."""
    vals = array("d", range(1 << 18))
    w = SortedWindow()
    w.move(vals, 0, len(vals))
    before = [id(b) for b in w.items.blocks]
    w.items.add(1000.5)
    after = [id(b) for b in w.items.blocks]
    assert len(w.items) == len(vals) + 1
    assert sum(x != y for x, y in zip(before, after, strict=False)) <= 1
    assert max(map(len, w.items.blocks)) <= 8192  # 64 KB of doubles moved by an insert, at most



def test_deletes_that_thin_every_block_leave_few_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values leave a window from anywhere in its order (the recent window slides; held-out steps drop intervals):
    when they thin every block, small blocks join their neighbours, so an index walks about 2 * len / BLOCK
    blocks and not one a value."""
    monkeypatch.setattr(SortedBlocks, "BLOCK", 4)
    blocks = SortedBlocks(array("d", range(400)))
    for x in range(400):
        if x % 4:
            blocks.remove(float(x))
    assert list(blocks) == [float(x) for x in range(0, 400, 4)]
    assert len(blocks.blocks) <= 100 // (SortedBlocks.BLOCK // 2) + 1, len(blocks.blocks)


def test_the_sorted_window_is_not_held_twice() -> None:
    """The sorted array a window is made from is emptied as its blocks are cut (from its end), so the 1 GB log's
    5 M loader shares are 40 MB once, not twice, at the server's peak."""
    items = array("d", range(10_000))
    blocks = SortedBlocks(items)
    assert len(items) == 0 and len(blocks) == 10_000
    assert [len(b) for b in blocks.blocks] == [SortedBlocks.BLOCK] * (10_000 // SortedBlocks.BLOCK) + [
        10_000 % SortedBlocks.BLOCK]
    assert list(blocks) == [float(x) for x in range(10_000)]
