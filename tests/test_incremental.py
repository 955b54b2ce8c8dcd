"""A growing log is read from where it was left, and ends up exactly as a cold read."""

from __future__ import annotations

import itertools
import os

import pytest

from conftest import RUNS, XTTS_PREFIX, series
from tbwrite import scalar_event, write
from trainlint.readers import open_source, read


def snapshot(log):  # type: ignore[no-untyped-def]
    return ({k: (list(s.steps), list(s.values), list(s.lines)) for k, s in log.series.items()},
            [(e.kind, e.step, e.line, e.record) for e in log.events], [p.message for p in log.problems])


@pytest.mark.parametrize("src", [XTTS_PREFIX, RUNS / "keras-brats" / "training.log",
                                 RUNS / "llamafactory-nsllm" / "trainer_log.jsonl",
                                 RUNS / "detectron2-maskrcnn" / "output" / "metrics.json"])
def test_appending_in_pieces_equals_a_cold_read(tmp_path, src):
    data = src.read_bytes()
    dst = tmp_path / src.name
    dst.write_bytes(b"")
    tail = open_source(str(dst), read(str(src)).format)
    cuts = sorted({0, len(data)} | {len(data) * k // 7 + 13 * k for k in range(1, 7)})
    for a, b in itertools.pairwise(cuts):
        with open(dst, "ab") as f:
            f.write(data[a:b])  # cuts fall mid-line: the partial line is read provisionally
        tail.update()
    assert snapshot(tail.log) == snapshot(read(str(src)))


def test_only_new_bytes_are_read(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text("".join(f'{{"step": {i}, "loss": {1 / (i + 1)}}}\n' for i in range(1000)))
    tail = open_source(str(p))
    tail.update()
    offset = tail.offset
    with open(p, "a") as f:
        f.write('{"step": 1000, "loss": 0.5}\n')
    assert tail.update() is True
    assert tail.offset == offset + len('{"step": 1000, "loss": 0.5}\n')
    assert len(series(tail.log, "loss")) == 1001 and tail.update() is False


def test_half_written_line_is_taken_back(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "lo')
    tail = open_source(str(p), "jsonl")
    tail.update()
    assert list(series(tail.log, "loss").steps) == [1]
    assert len(tail.log.problems) == 1  # the half line, for now
    with open(p, "a") as f:
        f.write('ss": 1.5}\n')
    tail.update()
    assert list(series(tail.log, "loss").steps) == [1, 2] and tail.log.problems == []


def test_truncated_or_replaced_file_is_read_again(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text("".join(f'{{"step": {i}, "loss": 1.0}}\n' for i in range(10)))
    tail = open_source(str(p))
    tail.update()
    p.write_text('{"step": 0, "loss": 5.0}\n')  # shorter: a new run over the old name
    tail.update()
    assert list(series(tail.log, "loss").values) == [5.0]
    q = tmp_path / "other.jsonl"
    q.write_text('{"step": 7, "loss": 3.0}\n{"step": 8, "loss": 2.0}\n')
    os.replace(q, p)  # a different inode under the same name
    tail.update()
    assert list(series(tail.log, "loss").steps) == [7, 8]


def test_coqui_state_survives_chunk_boundaries(tmp_path):
    data = XTTS_PREFIX.read_bytes()
    dst = tmp_path / "trainer_0_log.txt"
    dst.write_bytes(b"")
    tail = open_source(str(dst), "coqui")
    step = 4097
    for a in range(0, len(data), step):
        with open(dst, "ab") as f:
            f.write(data[a:a + step])
        tail.update()
    assert snapshot(tail.log) == snapshot(read(str(XTTS_PREFIX)))


def test_event_file_grows_and_new_shards_join(tmp_path):
    path = write(str(tmp_path), [scalar_event(s, "loss", 1.0) for s in range(3)], suffix=".a")
    tail = open_source(str(tmp_path))
    tail.update()
    assert len(series(tail.log, "loss")) == 3
    write(str(tmp_path), [scalar_event(s, "loss", 0.5) for s in range(3, 5)], suffix=".b")
    tail.update()
    assert list(series(tail.log, "loss").steps) == [0, 1, 2, 3, 4] and len(tail.log.members) == 2
    os.remove(path)
    tail.update()
    assert list(series(tail.log, "loss").steps) == [3, 4]


def test_a_log_rewritten_in_place_with_the_same_head_and_longer_is_read_again(tmp_path):
    """Same first 64 bytes, longer, a NaN where a value used to be: the reader must notice the rewrite (it kept
    the old points and never saw the NaN before)."""
    from trainlint.readers import open_source

    p = tmp_path / "train.log"
    head = "# run of 2026-12-03, seed 0, a header long enough to fill the identity bytes\n"
    p.write_text(head + "".join(f"step {i}, loss: {3.0 - 0.01 * i:.4f}\n" for i in range(1, 51)))
    src = open_source(str(p))
    src.update()
    rows = [f"step {i}, loss: {3.0 - 0.01 * i:.4f}\n" for i in range(1, 61)]
    rows[29] = "step 30, loss: nan\n"
    p.write_text(head + "".join(rows))  # same head, longer, different bytes before the old end
    assert src.update()
    loss = next(s for s in src.log.series.values() if s.name == "loss")
    assert len(loss) == 60 and loss.values[29] != loss.values[29]  # NaN read, old points dropped


def test_an_event_files_view_grows_with_it_and_a_hover_never_renders_it(tmp_path):
    """A growing 22 MB event file: its view (900k lines) was rendered again, on the event loop, for every
    publish (7-8 s per appended record). Now the view grows by the appended points only, and a request on
    the event loop takes the view as the last publish left it."""
    from tbwrite import record_offsets
    from trainlint.events_view import render
    from trainlint.lsp import diagnostics as dg
    from trainlint.lsp.workspace import Workspace

    src = tmp_path / "src"
    src.mkdir()
    full = write(str(src), [scalar_event(s, tag, 1.0 / (s + 1)) for s in range(400) for tag in ("loss", "lr")])
    data, offs = open(full, "rb").read(), record_offsets(full)
    run = tmp_path / "run"
    run.mkdir()
    live = run / os.path.basename(full)
    live.write_bytes(data[:offs[601]])
    ws = Workspace()
    tr = ws.track(str(live))
    assert tr is not None and ws.refresh(tr.path)
    views = dg.Views()
    view = views.get(tr, str(live))
    assert view is not None and len(view) == 601  # the header and 600 scalars
    with live.open("ab") as f:
        f.write(data[offs[601]:offs[611]])
    assert ws.refresh(tr.path)
    assert views.get(tr, str(live), fresh=False) is view and len(view) == 601  # a hover: as it was, no work
    assert views.get(tr, str(live)) is view and len(view) == 611              # the worker: grown by 10
    assert list(view.lines(tr.log)) == list(render(tr.log, str(live)).lines(tr.log))
    assert view.line(tr.log, 611) == "304\tlr\t0.0032786885276436806\t1970-01-01T00:21:44.000000Z\t610"
    assert view.line_of(610, view.keys[1]) == 611 and view.point_at(611) == (view.keys[1], 304)
    live.write_bytes(data[:offs[301]])                                       # rewritten shorter: made again
    assert ws.refresh(tr.path)
    again = views.get(tr, str(live))
    assert again is not view and len(again) == 301


def test_points_at_a_line_keep_no_index_of_every_line(tmp_path):
    """Hover in a 2M-line log rebuilt a dict of every line after each append (3 s and 557 MB per hover)."""
    import tracemalloc

    from trainlint.lsp.workspace import Workspace

    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}, loss: {1 + 1 / (i + 1):.6f}\n" for i in range(200_000)))
    ws = Workspace()
    tr = ws.track(str(log))
    assert tr is not None and ws.refresh(tr.path)
    tr.points_at(1)
    with log.open("a") as f:
        f.write("step 200000, loss: 0.5\n")
    ws.refresh(tr.path)
    tracemalloc.start()
    try:
        [(s, i)] = tr.points_at(200_001)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (s.name, i, s.values[i]) == ("loss", 200_000, 0.5)
    assert [(p[0].name, p[1]) for p in tr.points_at(17)] == [("loss", 16)]
    assert peak < 100_000, peak  # bytes: a few objects, not a map of 200,000 lines


@pytest.mark.parametrize("src", [XTTS_PREFIX, RUNS / "llamafactory-nsllm" / "trainer_log.jsonl"])
def test_reading_a_budget_at_a_time_ends_as_one_read(src):
    """A large log is read a budget at a time (the server's other work runs in between); the pieces end as
    one read, and until then the source says how much is left."""
    tail = open_source(str(src), read(str(src)).format)
    rounds = 0
    tail.update(budget=2000)
    while tail.behind:
        assert 0 < tail.progress() < 1
        rounds += 1
        tail.update(budget=2000)
    assert rounds > 5 and tail.progress() is None
    assert snapshot(tail.log) == snapshot(read(str(src)))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r\r\n"])
def test_a_line_is_found_by_reading_64_kb_not_its_whole_chunk(tmp_path, newline):
    """Each finding's line is read from disk: through an index entry every ~64 KB (a re-judge of a 10 MB
    stdout log took 70 ms splitting 4 MB chunks to find five lines; now 3 ms)."""
    p = tmp_path / "train.log"
    lines = [f"step {i}: loss {1 / (i + 1):.6f}" + (" x" * (i % 50)) for i in range(60_000)]
    p.write_text(newline.join(lines) + newline, newline="")
    tail = open_source(str(p), "text")
    tail.update()
    log = tail.log
    offsets = [off for _, off in log.line_index]
    assert len(offsets) > 40 and max(b - a for a, b in itertools.pairwise(offsets)) < (64 << 10) + 200
    per_line = newline.count("\n") + newline.count("\r") - newline.count("\r\n")
    for k in [0, 1, 999, 1000, 1001, 12_345, 33_333, 59_999]:
        got = log.line_text(k * per_line + 1)
        assert got == lines[k], (k, got)
