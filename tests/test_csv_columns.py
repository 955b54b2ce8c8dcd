"""The pure-Python CSV read a column at a time (CsvReader._plain_text, _plain_rows, _take: C-level calls over a
chunk's cells) reads every CSV as csv.reader a row at a time does (CsvReader._rows, the pure path before issue 28
took it to the floor, kept for every line the column read cannot prove plain).

The reference is the same reader with the column read switched off (every line left to _rows), both with the
compiled scanner off: the corpus's, gallery's and population's real CSVs, edited copies of them (quotes, lone
"\\r", blank lines, ragged rows, odd and non-ASCII cells, corner-case steps) and growing copies cut anywhere must
give the same series (steps, values, wall times, lines as bytes), events, problems and facts. Each comparison also
counts the rows the column read took, so a column read that always declined could not pass.
"""

from __future__ import annotations

import csv
import io
import itertools
import random
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS, FIXTURES
from test_compiled_scanner import CSV_PIECES, _edited_csv, _same_reading

CSV_LOGS = sorted([*CORPUS.glob("csv_logs/*"), *(p for p in (FIXTURES / "live").glob("*/**/*")
                                                 if p.suffix == ".csv" or p.name == "training.log"),
                   *(FIXTURES / "population").glob("**/*.csv")])
# Step cells int() and float() may read apart: signed zeros, underscores, non-ASCII digits and spaces, integers past
# 2**53 and past the double range, and what neither reads.
STEP_PIECES = ["-0", "+0", "-00", "0_0", "-0_0", "1_000", "\u0661\u0662", "\u00a012", " 7 ", "9007199254740993",
               "1" * 400, "1e5", "5.0", "-5", "0", "", " ", "x", "1__0", "0x10", "\u00b5"]


def _module():  # type: ignore[no-untyped-def]
    from trainlint.readers import csv_log

    return csv_log


class _Taken:
    """Counts the rows CsvReader._take read (it declined none of them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = 0
        reader = _module().CsvReader
        take = reader._take

        def counted(this, column, m, line, bufs, into=None):  # type: ignore[no-untyped-def]
            ok = take(this, column, m, line, bufs, into)
            self.rows += m if ok else 0
            return ok

        monkeypatch.setattr(reader, "_take", counted)


def _by_rows(m: pytest.MonkeyPatch) -> None:
    """The reader with the column read off: every line of a chunk is csv.reader's (_rows)."""
    csv_log = _module()
    m.setattr(csv_log, "_odd_lines", lambda lines, start, columns: list(range(start, len(lines))))
    m.setattr(csv_log.CsvReader, "_plain_text", lambda self, text, line, bufs, breaks=None: -1)


def _read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(by columns, by rows) reads of one file, both on the pure path."""
    from trainlint.readers import read

    monkeypatch.setattr(_module(), "CSCAN", None)
    columns = read(str(path), "csv")
    with monkeypatch.context() as m:
        _by_rows(m)
        rows = read(str(path), "csv")
    return columns, rows


def _data_rows(log: object) -> int:
    return sum(len(s.values) for s in log.series.values())  # type: ignore[attr-defined]


def test_every_real_csv_is_read_by_columns_as_by_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"the corpus is not available: {CORPUS} (set TRAINLINT_CORPUS)")
    taken = _Taken(monkeypatch)
    lines = 0
    for p in CSV_LOGS:
        a, b = _read_both(p, monkeypatch)
        _same_reading(a, b, str(p))
        lines += p.read_bytes().count(b"\n")
    print(f"csv: {len(CSV_LOGS)} real logs, {taken.rows} of their {lines} lines read by columns")
    assert len(CSV_LOGS) >= 90, len(CSV_LOGS)
    assert taken.rows > 0.9 * lines, (taken.rows, lines)  # the column read did the reading compared


def _edited_step(text: str, rnd: random.Random) -> str:
    """``text`` with 1-4 data rows' step cells (the header's "step", else "epoch") replaced by STEP_PIECES."""
    lines = text.split("\n")
    names = [c.strip().lower() for c in lines[0].split(",")]
    col = names.index("step") if "step" in names else names.index("epoch") if "epoch" in names else 0
    for _ in range(rnd.randint(1, 4)):
        i = rnd.randrange(1, max(2, len(lines) - 1))
        cells = lines[i].split(",")
        if col < len(cells):
            cells[col] = rnd.choice(STEP_PIECES)
            lines[i] = ",".join(cells)
    return "\n".join(lines)


def test_edited_real_csvs_are_read_by_columns_as_by_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,300 edited copies of real CSVs (the gallery's CRLF Lightning and Keras logs, an SB3 progress.csv, a sparse
    Lightning metrics.csv, a padded ultralytics results.csv): CSV_PIECES inserted anywhere (quotes, a quoted line
    break, lone "\\r", mixed breaks, blank lines, odd cells, ragged rows), steps replaced by STEP_PIECES, a non-ASCII
    cell, a NUL."""
    sources = [p for p in CSV_LOGS if "live" in p.parts or p.name.startswith(("0Xero7", "176yunxuan"))]
    assert len(sources) >= 6, sources
    rnd = random.Random(2812)
    taken = _Taken(monkeypatch)
    compared = lines = 0
    for src in sources:
        raw = src.read_bytes()[:30000]
        text = raw[:raw.rfind(b"\n") + 1].decode()
        for k in range(1300 // len(sources)):
            edited = _edited_csv(text.encode(), rnd).decode() if k % 3 else text
            if k % 3 != 1:
                edited = _edited_step(edited, rnd)
            if k % 7 == 0:
                at = rnd.randrange(len(edited))
                edited = edited[:at] + rnd.choice(["\u00b5", "\x00", "\u2028", "\ufeff"]) + edited[at:]
            p = tmp_path / src.name
            p.write_text(edited, newline="")
            a, b = _read_both(p, monkeypatch)
            _same_reading(a, b, f"{src} edit {k}: {edited[:3000]!r}")
            compared += 1
            lines += edited.count("\n")
    print(f"csv: {compared} edited copies of {len(sources)} files, {taken.rows} of their {lines} lines read by columns")
    assert taken.rows > 0.5 * lines, (taken.rows, lines)


def test_growing_csvs_cut_anywhere_are_read_by_columns_as_by_rows(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A real CSV appended in pieces cut anywhere (inside the header, mid-row, between "\\r" and "\\n"), read after
    each piece: the partial last row is read and taken back, the column read starts wherever a piece does."""
    from trainlint.readers import open_source

    csv_log = _module()
    monkeypatch.setattr(csv_log, "CSCAN", None)
    taken = _Taken(monkeypatch)
    rnd = random.Random(28)
    compared = 0
    corpus_csv = [p for p in CSV_LOGS if p.name.startswith("0Xero7")]  # none where the corpus is absent
    for src in [p for p in CSV_LOGS if "live" in p.parts] + corpus_csv:
        data = src.read_bytes()[:200000]
        cuts = sorted({0, len(data), *(rnd.randrange(len(data)) for _ in range(14)),
                       *[i for i in range(len(data)) if data[i:i + 1] == b"\r"][:3]})
        tails = []
        for by_rows in (False, True):
            dst = tmp_path / f"{int(by_rows)}-{src.name}"
            dst.write_bytes(b"")
            tails.append((by_rows, open_source(str(dst), "csv")))
        for a, b in itertools.pairwise(cuts):
            for by_rows, tail in tails:
                with open(tail.path, "ab") as f:
                    f.write(data[a:b])
                with monkeypatch.context() as m:
                    if by_rows:
                        _by_rows(m)
                    tail.update()
            _same_reading(tails[0][1].log, tails[1][1].log, f"{src} cut at {b}")
            compared += 1
    print(f"csv: {compared} pieces compared, {taken.rows} rows read by columns")
    # the gallery's CSVs alone give 290 rows to the column read (a clone without ../shared/corpus failed on 1000)
    assert compared >= 80 and taken.rows > (1000 if corpus_csv else 250), (compared, taken.rows)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(STEP_PIECES), st.integers(-10 ** 30, 10 ** 30).map(str),
                          st.text("0123456789-+_ .e\u0663\u00a0", max_size=8)), min_size=1, max_size=4))
def test_a_step_column_is_the_doubles_float_reads(cells: list[str]) -> None:
    """_steps (int() first) gives float()'s doubles, bit for bit (a signed zero included), or refuses as it does."""
    steps = _module()._steps
    try:
        want = array("d", [float(c) for c in cells])
    except ValueError:
        with pytest.raises(ValueError):
            steps(cells)
        return
    assert steps(cells).tobytes() == want.tobytes(), cells


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30), st.integers(2, 25), st.booleans())
def test_a_line_past_the_field_limit_is_left_to_csv_reader(lengths: list[int], limit: int, crlf: bool) -> None:
    """lines_within (the column read's test) says True only when no line is longer than csv's field limit (csv.reader
    raises on a longer cell, which the column read would have read), and for every text whose lines are shorter than
    half of it; _odd_lines leaves every longer line to csv.reader."""
    from trainlint.core.lines import lines_within

    csv_log = _module()
    lines = ["," * (n % 2) + "7" * max(0, n - n % 2) for n in lengths]
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    old = csv.field_size_limit(limit)
    try:
        short = lines_within(text, csv.field_size_limit())
        odd = csv_log._odd_lines(lines, 0, 2)
    finally:
        csv.field_size_limit(old)
    longest = max(len(ln) + crlf for ln in lines)
    if short:
        assert longest <= limit, (lengths, limit)
    if longest < limit // 2:
        assert short, (lengths, limit)
    assert {i for i, ln in enumerate(lines) if len(ln) > limit} <= set(odd), (lengths, limit, odd)
    assert all(ln.count(",") != 1 or len(ln) > limit or i not in odd for i, ln in enumerate(lines)), odd


# A quoted cell holding a comma in a row of the header's number of commas: the column read would split it, csv.reader
# does not (a row one cell short), which only shows when neither half is a cell float() refuses: here the first two
# columns have no series (unnamed), so only the third does, and the quoted row has no cell there. As text, as a
# list of lines (a lone "\r" elsewhere), and with the header's step column.
QUOTED = [',,loss\n1,2,3\n"a,b",5\n4,5,6\n', ',,loss\r\n1,2,3\r\n"a,b",5\r\n4,5,6\r\n',
          ',,loss\n1,2,3\r"a,b",5\n4,5,6\n', ',step,loss\n1,2,3\n"a,b",5\n4,5,6\n', ',,loss\n1,2,3\n"x",,5\n4,5,6\n']


@pytest.mark.parametrize("text", QUOTED)
def test_a_quoted_comma_is_left_to_csv_reader(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "metrics.csv"
    p.write_text(text, newline="")
    a, b = _read_both(p, monkeypatch)
    _same_reading(a, b, repr(text))
    want = sum(1 for row in list(csv.reader(io.StringIO(text, newline="")))[1:] if len(row) > 2 and row[2])
    assert [len(s.values) for s in a.series.values()] == [want], text  # "a,b": the rows 1 and 4 only


@pytest.mark.parametrize("every, column", [(1, "note"), (3, "note"), (997, "note"), (0, "note"), (3, "step"),
                                           (997, "step"), (0, "step")])
def test_odd_cells_in_many_rows_are_read_by_columns_as_by_rows(every: int, column: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """5,000 rows, cells float() refuses in every ``every``-th row (0: in one, row 4,321) of one column and just
    before them in another, padded ones beside them: a value column's are read a cell at a time and reported
    once a column in row order (acc's first before note's, though note comes first in the row); a step's (its row
    skipped) decline the rows, halved down to csv.reader's."""
    rows = ["step,loss,note,acc"]
    for i in range(5000):
        odd = (i % every == 1) if every > 1 else i == 4322 if not every else True
        early = (i % every == 0) if every else i == 4321
        step = "x" if odd and column == "step" else str(i)
        note = "n/a" if odd and column == "note" else " 7 " if odd else ""
        rows.append(f"{step},{i / 7},{note},{' y' if early else ' 0.5 ' if i % 4 == 0 else i % 5}")
    p = tmp_path / "metrics.csv"
    p.write_text("\r\n".join(rows) + "\r\n", newline="")
    taken = _Taken(monkeypatch)
    a, b = _read_both(p, monkeypatch)
    _same_reading(a, b, f"every {every}, {column}")
    firsts = sorted((next(i for i, r in enumerate(rows) if what in r), k, name)
                    for k, name, what in [(2, "note", "n/a"), (3, "acc", " y")] if any(what in r for r in rows))
    assert [q.message.split("`")[1] for q in b.problems] == [name for _, _, name in firsts], b.problems
    if column == "note" or every == 0 or every > 64:  # a step in every 64 rows that is no number: all csv.reader's
        assert taken.rows > 4000, taken.rows


def test_the_pieces_are_those_of_the_compiled_comparison() -> None:
    """The edits above include every CSV_PIECES case the compiled scanner's comparison feeds (quotes, lone "\\r")."""
    assert {'"', '"a\nb"', "\r", "\r\r\n", "\n\n", ",,"} <= set(CSV_PIECES)


def _lightning(rows: int, rnd: random.Random, *, val_every: int, last: str = "val", crlf: bool = True,
               blank_val_from: int = -1, stray: int = -1, apart: bool = False) -> str:
    """A Lightning-like metrics.csv: train rows (epoch, step, two train metrics), a validation row every
    ``val_every`` (the val metrics, the train ones blank), ``last``: the last column's name ("val": a val metric,
    "dense": a metric on every row). No val row after ``blank_val_from`` (>= 0): the val columns blank in whole
    chunks. ``stray`` >= 0: a val cell on a train row every ``stray`` rows (not where the train metrics are blank).
    ``apart``: train_ppl blank on the row after each val row instead (as many blanks as train_loss, elsewhere)."""
    names = ["epoch", "epoch_time", "step", "train_loss", "val_acc", "train_ppl", "val_loss"]
    out = [",".join(names)]
    for i in range(rows):
        val = i % val_every == val_every - 1 and not (0 <= blank_val_from <= i)
        cells = [str(i // 500), "", str(i * 10), "", "", "", ""]
        if val:
            cells[4], cells[6] = repr(rnd.random()), repr(rnd.random())
        else:
            cells[3], cells[5] = repr(rnd.random() * 5), repr(rnd.random() * 100)
            if stray > 0 and i % stray == 1:
                cells[4] = repr(rnd.random())
        if apart:
            cells[5] = "" if i % val_every == 0 else repr(rnd.random() * 100)
        if i % 997 == 996:
            cells[1] = repr(rnd.random() * 1000)  # an epoch row's cell beside a train row's
        if last == "dense":
            cells[6] = repr(rnd.random())
        out.append(",".join(cells))
    brk = "\r\n" if crlf else "\n"
    return brk.join(out) + brk


LIGHTNING = {  # name: (the file's text from a seeded generator)
    "sparse val, crlf": lambda r: _lightning(6000, r, val_every=283),
    "sparse val, lf": lambda r: _lightning(6000, r, val_every=283, crlf=False),
    "val columns blank in the later chunks": lambda r: _lightning(6000, r, val_every=50, blank_val_from=2500),
    "val cells off the train gaps": lambda r: _lightning(6000, r, val_every=283, stray=301),
    "dense last column": lambda r: _lightning(6000, r, val_every=283, last="dense"),
    "val on most rows": lambda r: _lightning(3000, r, val_every=2),
    "cr only": lambda r: _lightning(3000, r, val_every=283).replace("\r\n", "\r"),
    "cr beside a cell before its lf": lambda r: _lightning(3000, r, val_every=283).replace(
        ",\r\n", ",\r\x1f\n", 3),
    "train gaps apart": lambda r: _lightning(6000, r, val_every=283, apart=True),
    "blank lines and quotes": lambda r: _lightning(3000, r, val_every=283).replace(
        "\r\n1,", "\r\n\r\n1,", 2).replace("\r\n2,", '\r\n"2",', 3),
    "step -0": lambda r: _lightning(3000, r, val_every=283).replace("\r\n0,,0,", "\r\n0,,-0,", 1),
    "epoch step (keras order)": lambda r: _lightning(3000, r, val_every=283).replace("epoch,epoch_time,step",
                                                                                     "epoch,epoch_time,stp"),
}


@pytest.mark.parametrize("name", sorted(LIGHTNING))
@pytest.mark.parametrize("chunk", [1 << 22, 1 << 14, 4093])
def test_lightning_like_csvs_in_chunks_are_read_by_columns_as_by_rows(
        name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The column read's branches (a column blank in a whole chunk and not in the next; sparse cells all at the rows
    where the train metrics are blank, or some elsewhere; the last column sparse, dense or the first one needed too;
    breaks of "\\r" alone, or a "\\r" with a cell between it and its "\\n"; blank lines and quotes; a step "-0") in
    files read whole and in chunks cut mid-row (a block of 4,093 bytes): the same reading as csv.reader's."""
    from trainlint.readers import base

    monkeypatch.setattr(base, "CHUNK", chunk)
    p = tmp_path / "metrics.csv"
    p.write_text(LIGHTNING[name](random.Random(28)), newline="")
    taken = _Taken(monkeypatch)
    a, b = _read_both(p, monkeypatch)
    _same_reading(a, b, name)
    lines = p.read_bytes().count(b"\n")
    if name.startswith(("sparse", "val", "dense", "epoch", "train")):
        assert taken.rows > 0.9 * lines, (taken.rows, lines)
    if name == "step -0":
        steps = next(s for s in a.series.values() if s.name == "train_loss").steps  # type: ignore[attr-defined]
        assert str(steps[0]) == "-0.0", steps[:3]


def test_the_feed_tells_the_reader_the_breaks_of_its_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FormatReader.breaks while scan reads a chunk the Tail fed: the "\\n" and "\\r" of the text scan is given
    (a BOM and NULs dropped, bytes replaced); None again after scan."""
    from trainlint.core.model import LogFile
    from trainlint.readers import base

    seen: list[tuple[str, int, object]] = []

    class Recorder(base.FormatReader):
        format = "csv"

        def scan(self, text: str, first_line: int) -> None:
            seen.append((text, first_line, self.breaks))

    monkeypatch.setattr(base, "CHUNK", 64)
    monkeypatch.setattr(base, "count_breaks_bytes", base.count_breaks_bytes_py)  # the pure path's feed
    rnd = random.Random(7)
    pieces = ["a,b", "\r\n", "\n", "\r", "\x00", "\xff", "é", "\r\x1f\n", "1.5", ","]
    told = 0
    for k in range(300):
        body = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 80)))
        data = (b"\xef\xbb\xbf" if k % 5 == 0 else b"") + body.encode("utf-8", "surrogateescape").replace(
            "\xff".encode(), b"\xff")
        p = tmp_path / f"{k}.csv"
        p.write_bytes(data)
        seen.clear()
        reader = Recorder(LogFile(path=str(p), format="csv"))
        tail = base.Tail(str(p), reader)
        tail.update()
        assert reader.breaks is None
        for text, _, breaks in seen:
            assert breaks == (text.count("\n"), text.count("\r")), (data, text, breaks)
            told += 1
    assert told > 300, told


def test_the_line_index_counts_the_bytes_breaks_whoever_pairs_them(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure feed counts "\\n" alone when the CSV reader found every "\\r" of its rows followed by "\\n"
    (``paired``), else looks for a lone "\\r" itself: CRLF CSVs with a lone "\\r", a cell between a "\\r" and
    its "\\n", a NUL there (the text's "\\r\\n" is two breaks of the bytes), LF rows under a CRLF header, a lone
    "\\r" before the header, read in blocks of 200 bytes to 4 KB: every line-index entry and the line the Tail
    goes on from are count_breaks_bytes' of the bytes before them, and the reading is csv.reader's."""
    from trainlint.core.lines import count_breaks_bytes_py
    from trainlint.readers import base, csv_log, open_source

    monkeypatch.setattr(base, "count_breaks_bytes", count_breaks_bytes_py)
    monkeypatch.setattr(base, "INDEX_STEP", 256)
    monkeypatch.setattr(csv_log, "CSCAN", None)
    paired = []
    scan = csv_log.CsvReader.scan

    def scanned(self, text, first_line):  # type: ignore[no-untyped-def]
        scan(self, text, first_line)
        paired.append(self.paired)

    monkeypatch.setattr(csv_log.CsvReader, "scan", scanned)
    told: list[bool] = []
    rnd = random.Random(11)
    for k in range(120):
        rows = [f"{i},{rnd.random()!r},{'' if i % 7 else rnd.random()!r}" for i in range(rnd.randint(1, 300))]
        text = "step,loss,val\r\n" + "".join(r + rnd.choice(["\r\n"] * 40 + ["\n", "\r", "\r\x1f\n", "\r\x00\n"])
                                             for r in rows)
        if k % 3 == 0:
            text = text.replace("\r\n", "\n").replace("step,loss,val\n", "step,loss,val\r\n")
        if k % 5 == 1:  # a lone "\r" (a blank line) before the header, in the chunk the rows start in
            text = "\r" + text
        data = text.encode()
        p = tmp_path / "metrics.csv"
        p.write_bytes(data)
        monkeypatch.setattr(base, "CHUNK", rnd.choice([200, 1000, 4096]))
        src = open_source(str(p), "csv")
        src.update()
        for line, off in src.log.line_index:
            assert line == count_breaks_bytes_py(data[:off]) + 1, (k, line, off, data[:off][-40:])
        done = data.rfind(b"\n") + 1
        assert src.next_line == count_breaks_bytes_py(data[:done]) + 1, k  # type: ignore[attr-defined]
        told += paired
        with monkeypatch.context() as m:
            _by_rows(m)
            _same_reading(src.log, _reread(p), f"edit {k}")
        paired.clear()
    assert told.count(True) > 50 and told.count(False) > 50, (told.count(True), told.count(False))


def _reread(p: Path) -> object:
    from trainlint.readers import read

    return read(str(p), "csv")
