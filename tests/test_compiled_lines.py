"""The compiled line counter (``_clines``) counts what core/lines.py's bytes.count passes count, and the chunk feed's
line index and line numbers do not depend on which of the two counted nor on where the chunks were cut.

Why: every line-based reader's findings land on the lines these counts give; a counter that is off by one lone ``\\r``
moves every diagnostic after it (tqdm's redraws are lone ``\\r``)."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from trainlint.core import accel, lines
from trainlint.core.lines import count_breaks_bytes_py, split_lines
from trainlint.core.model import LogFile
from trainlint.readers import base
from trainlint.readers.base import Tail
from trainlint.readers.text_stdout import TextStdoutReader

CORPUS = Path(os.environ.get("TRAINLINT_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
needs_clines = pytest.mark.skipif(accel.CLINES is None, reason=f"compiled line counter: {accel.CLINES_REASON}")


@needs_clines
def test_count_equals_the_bytes_count_passes_on_random_bytes_and_bounds() -> None:
    rnd = random.Random(28)
    for _ in range(30_000):
        data = bytes(rnd.choice(b"\r\n\ra") for _ in range(rnd.randint(0, 14)))
        start = rnd.randint(-18, 18)
        end = rnd.choice([None, rnd.randint(-18, 18)])
        got = accel.CLINES.count_breaks(data, start, end)
        assert got == count_breaks_bytes_py(data, start, end), (data, start, end)
    assert accel.CLINES.count_breaks(b"a\r") == 1 and accel.CLINES.count_breaks(b"a\r\n", 0, 2) == 1
    assert accel.CLINES.count_breaks(bytearray(b"\r\n\n\r")) == 3  # any bytes-like chunk


@needs_clines
def test_count_equals_the_bytes_count_passes_on_every_corpus_text() -> None:
    suffixes = {".txt", ".log", ".csv", ".jsonl", ".out"}
    files = [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix in suffixes]
    if not files:
        pytest.skip(f"no corpus at {CORPUS} (TRAINLINT_CORPUS)")
    with_cr = 0
    for p in files:
        data = p.read_bytes()
        with_cr += b"\r" in data
        for cut in (0, len(data) // 3, len(data) // 2):  # a chunk boundary anywhere, even inside a \r\n
            assert accel.CLINES.count_breaks(data, cut) == count_breaks_bytes_py(data, cut), p
            assert accel.CLINES.count_breaks(data, 0, cut) == count_breaks_bytes_py(data, 0, cut), p
    assert len(files) > 40 and with_cr > 3  # the corpus holds CRLF logs and tqdm's lone \r


def _expected_lines(data: bytes) -> tuple[list[int], list[tuple[int, int]]]:
    """Each line's first byte, counted by the regex over the whole file: the reference for the index."""
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
    return starts, [(i + 1, s) for i, s in enumerate(starts)]


@pytest.mark.parametrize("chunk", [1 << 10, 3000, 1 << 22])
def test_the_feed_counts_lines_and_indexes_them_wherever_chunks_are_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Small chunks and index steps, mixed breaks: every index entry names the line that starts at its byte, and the
    next line after the read is one past the last (the index's count and the chunk's remainder add up)."""
    rnd = random.Random(chunk)
    parts = []
    for i in range(4000):
        parts.append(f"{{'loss': {rnd.random():.4f}, 'epoch': {i / 100:.2f}}}".encode())
        if i % 997 == 0:  # a line longer than the smaller chunks: read on until its break
            parts.append(b" " + b"x" * 5000)
        parts.append(rnd.choice([b"\n", b"\r\n", b"\r", b" 12%|#  | 3/25\r"]))
    data = b"".join(parts) + b"last line without a break"
    path = tmp_path / "train.log"
    path.write_bytes(data)
    monkeypatch.setattr(base, "CHUNK", chunk)
    monkeypatch.setattr(base, "INDEX_STEP", 700)
    tail = Tail(str(path), TextStdoutReader(LogFile(path=str(path), format="text")))
    tail.update()
    starts, _ = _expected_lines(data)
    line_of = {s: i + 1 for i, s in enumerate(starts)}
    index = tail.log.line_index
    assert len(index) > len(data) // 1000  # an entry every ~700 bytes, not only at chunk starts
    for line, offset in index:
        assert line_of[offset] == line, (line, offset)
    # what follows the last \n is provisional (a writer may be half-way through it): the next read starts there
    assert tail.next_line == line_of[data.rfind(b"\n") + 1] > 3000


@pytest.mark.parametrize("chunk", [1 << 10, 1 << 22])
def test_undecodable_bytes_are_said_once_on_their_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       chunk: int) -> None:
    """The problem names the first line of the chunk that held bad bytes (as before the feed read views), once;
    a chunk that also writes U+FFFD itself is not blamed (its replacement characters may be the file's)."""
    lines = [f"step {i} loss {1 / (i + 1):.4f}".encode() for i in range(300)]
    lines[200] = b"odd bytes \xff\xfe here"
    lines[250] = b"a cut character \xc3"
    path = tmp_path / "train.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(base, "CHUNK", chunk)
    tail = Tail(str(path), TextStdoutReader(LogFile(path=str(path), format="text")))
    tail.update()
    bad = [p for p in tail.log.problems if "not valid UTF-8" in p.message]
    first_line_of_chunk = max(ln for ln, _ in tail.log.line_index if ln <= 201)  # the chunk holding line 201
    assert len(bad) == 1 and bad[0].line == first_line_of_chunk
    assert (first_line_of_chunk == 1) == (chunk == 1 << 22)
    assert [len(s) for s in tail.log.series.values()] == [298]  # every step line around the bad bytes is read

    lines[200] = b"step 200 loss 0.1 \xef\xbf\xbd \xff"  # a written U+FFFD beside a bad byte, in one chunk
    lines[250] = b"step 250 loss 0.1"
    path.write_bytes(b"\n".join(lines) + b"\n")
    tail = Tail(str(path), TextStdoutReader(LogFile(path=str(path), format="text")))
    tail.update()
    assert not [p for p in tail.log.problems if "not valid UTF-8" in p.message]


def test_the_pairs_counted_by_the_regex_are_the_bytes_count_pairs() -> None:
    """`count_crlf` (the regex's literal search: bytes.count's stops at each "\\r" of an HF stdout) counts what
    bytes.count counts, with the same bounds, negative and past the end ones included. Fails with its bounds passed to
    the regex as they are."""
    from trainlint.core.lines import count_crlf

    rnd = random.Random(2807)
    for _ in range(30_000):
        data = bytes(rnd.choice(b"\r\n\ra") for _ in range(rnd.randint(0, 14)))
        start = rnd.randint(-18, 18)
        end = rnd.choice([None, rnd.randint(-18, 18)])
        assert count_crlf(data, start, end) == data.count(b"\r\n", start, end), (data, start, end)


def _reference_line(data: bytes, k: int) -> tuple[str, bool] | None:
    """Line k of data as the lookup read it before: the whole block decoded, every line split."""
    split = split_lines(data.decode("utf-8", "replace").removeprefix("\ufeff"))
    return (split[k], k == len(split) - 1) if 0 <= k < len(split) else None


@pytest.mark.parametrize("compiled", [False, True])
def test_a_line_found_in_the_bytes_is_the_line_of_the_decoded_block(compiled: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A finding's line text comes from its bytes alone: the same text, and the same "is it the block's last line"
    (a last line cut by the read limit is not trusted), as decoding the whole block and splitting it, with
    multi-byte characters, invalid bytes cut by a break, a byte-order mark and breaks of every kind."""
    if compiled and accel.CLINES is None:
        pytest.skip(f"compiled line counter: {accel.CLINES_REASON}")
    if not compiled:
        monkeypatch.setattr(lines, "line_span", lines.line_span_py)
    rnd = random.Random(5)
    pieces = [b"\n", b"\r", b"\r\n", b"a", b"loss=0.5", "█▏ é".encode(), b"\xe2\x82", b"\xff", b"\x0b", b"\x85",
              "\u2028".encode(), b"\xef\xbb\xbf", b"x" * 40]
    for _ in range(4000):
        data = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        if rnd.random() < 0.1:
            data = b"\xef\xbb\xbf" + data
        for k in range(-1, data.count(b"\n") + data.count(b"\r") + 2):
            assert lines.utf8_line(data, k) == _reference_line(data, k), (data, k)
    long = b"".join(rnd.choice(pieces) for _ in range(20_000))  # past the 16-byte lanes
    for k in range(0, long.count(b"\n") + long.count(b"\r") + 2, 7):
        assert lines.utf8_line(long, k) == _reference_line(long, k), k


def test_every_corpus_finding_line_reads_as_before(tmp_path: Path) -> None:
    """Every line of real logs (tqdm bars, CRLF, UTF-8 bars) looked up through the line index gives the text that
    splitting the decoded file gives."""
    files = [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix in {".txt", ".log", ".out"}]
    if not files:
        pytest.skip(f"no corpus at {CORPUS} (TRAINLINT_CORPUS)")
    looked = 0
    for p in files[:60]:
        data = p.read_bytes()
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        tail = Tail(str(p), TextStdoutReader(LogFile(path=str(p), format="text")))
        tail.update()
        expected = split_lines(data.decode("utf-8", "replace").removeprefix("\ufeff"))
        for n in range(1, len(expected) + 1, max(1, len(expected) // 200)):
            assert tail.log.line_text(n) == expected[n - 1], (p, n)
            looked += 1
    assert looked > 2000
