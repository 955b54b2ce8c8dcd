"""The pure-Python Coqui read a block at a time (CoquiReader._scan_blocks) reads exactly what the read a line at a
time (_scan_lines, one regex match a line) reads.

The block path reads the value lines under a step header or an evaluation with one match of a pattern made for
their keys and converts a key's numbers a column at a time; everything it cannot prove it reads as the line path
does (other keys, a number float() refuses, a line with anything before its ``| > ``, a carriage return) is left
to the regex a line at a time. These tests hold the two to the same series (bytes, and the order the series were
made in), events, problems and facts: random texts of real Coqui lines and their near misses, blocks whose layout
changes, cut into two chunks at every line, a file growing in pieces cut anywhere, and every real Coqui log.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES
from test_compiled_text import _NUMS, _OTHER, _coqui_text, _epochs, _header, _value_line

COQUI_FILES = sorted([*CORPUS.glob("coqui_trainer_log/*"), *CORPUS.glob("trainproof/**/trainer_0_log.txt"),
                      FIXTURES / "runs" / "xtts-prefix" / "trainer_0_log.txt"])
VITS = CORPUS / "coqui_trainer_log" / "jofrems__TTS_VITS_Finetuned__trainer_0_log.txt"


def _view(log: object) -> object:
    """Everything a read leaves, the series in the order they were made."""
    from cscan_dump import digest

    return ([(k, len(s), digest(s), s.role, s.locator and s.locator.source) for k, s in log.series.items()],
            [(e.kind.value, e.step, type(e.step), e.line, e.text, repr(e.detail)) for e in log.events],
            [(p.line, p.message) for p in log.problems],
            [(k, "nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in log.facts.items()])


@pytest.fixture
def pure(monkeypatch: pytest.MonkeyPatch) -> object:
    """The Coqui reader's module with the compiled scanner off: its scan is the block path."""
    import trainlint.readers.coqui as coqui

    monkeypatch.setattr(coqui, "CTEXT", None)
    return coqui


def _scan(coqui: object, chunks: list[tuple[str, int]], blocks: bool) -> object:
    from trainlint.core.model import LogFile

    log = LogFile(path="x", format="coqui")
    reader = coqui.CoquiReader(log)  # type: ignore[attr-defined]
    scan = reader._scan_blocks if blocks else reader._scan_lines
    for text, first in chunks:
        scan(text, first)
    return log


def _both(coqui: object, chunks: list[tuple[str, int]], what: str) -> None:
    assert _view(_scan(coqui, chunks, True)) == _view(_scan(coqui, chunks, False)), what


_KEYS = ["loss", "loss_disc", "grad_norm_0", "current_lr_0", "amp_scaler", "loader_time", "loss_mel"]


def _block_lines(r: random.Random, keys: list[str], train: bool) -> list[str]:
    """A block's value lines as Coqui writes them, now and then one the line path reads differently or not at all:
    an odd number (refused by float(), or by the block pattern's class but not by _MASTER's), a missing or broken
    average, a colour code, something before the ``| > ``, a repeated key, a blank line."""
    out = []
    for k in keys:
        num = f"{r.random() * 10:.5f}" if r.random() < 0.9 else r.choice([*_NUMS, "1.5\xa0", "2é", "-0.00000", "+1"])
        if train:
            avg = r.choice([f"  ({r.random():.5f})"] * 6 + ["", " ", "  (x)", "  (1", f"  ({num})  ", "\x1b[0m (1)"])
            line = f"     | > {k}: {num}{avg if not k.startswith('current_lr') else ' '}"
        else:
            colour, sign = r.choice(["", "", "\x1b[92m"]), r.choice(["+", "-"])
            line = f"     | > {k}:{colour} {num} \x1b[0m({sign}{r.random():.5f})"
        if r.random() < 0.03:
            line = r.choice([" x ", "\t", "\x1b[1m", "> ", "- "]) + line.lstrip()
        out.append(line)
    if r.random() < 0.05:
        out.insert(r.randrange(len(out) + 1), r.choice(["", f"     | > {r.choice(keys)}: 1.0  (2.0)", _value_line(r)]))
    return out


def _block_text(r: random.Random) -> str:
    """Epochs of step blocks and evaluations with the keys of one layout most of the time (the block path's cached
    pattern), then another (a key more or less, an average dropped), headers with and without their time, and a
    line of another kind now and then."""
    keys = r.sample(_KEYS, r.randint(1, len(_KEYS)))
    lines, step = [], r.randrange(1000)
    for epoch in range(r.randint(1, 5)):
        lines += [f"\x1b[4m\x1b[1m > EPOCH: {epoch}/9\x1b[0m", " --> /c/run-2022", "",
                  "\x1b[1m > TRAINING (2022) \x1b[0m"]
        for _ in range(r.randint(1, 4)):
            if r.random() < 0.15:
                keys = r.sample(_KEYS, r.randint(1, len(_KEYS)))
            step += 25
            time = r.choice(["", f"TIME: 2022-11-03 10:{r.randint(10, 59)}:31 -- "])
            tail = r.choice(["\x1b[0m"] * 8 + ["", " ", " | > loss: 9.0", " > EPOCH: 3/4", "\x1b[0m T"])
            lines += [f"\x1b[1m   --> {time}STEP: {step % 36}/36 -- GLOBAL_STEP: {step}{tail}",
                      *_block_lines(r, keys, True), ""]
        lines += ["", "\x1b[1m > EVALUATION \x1b[0m", "", "", "  \x1b[1m--> EVAL PERFORMANCE\x1b[0m",
                  *_block_lines(r, ["avg_" + k for k in keys], False), ""]
        if r.random() < 0.5:
            lines.append(f" > BEST MODEL : /c/best_model_{step}.pth")
        if r.random() < 0.1:
            lines.append(r.choice([*_OTHER, _header(r, step), _value_line(r)]))
    return "\n".join(lines) + r.choice(["\n", "\n", "", "\n     | > loss: 1.2", "\n     | > lo"])


def _texts(r: random.Random, n: int) -> list[str]:
    return [(_block_text if k % 2 else _coqui_text)(r) for k in range(n)]


def test_random_texts_read_as_the_line_path_reads(pure: object) -> None:
    """4,000 texts: Coqui's blocks with their layouts changing and broken, and the near misses of the compiled
    scanner's test (colour codes, a tab, a non-ASCII character, 16 digits, lines of two kinds), read whole."""
    r = random.Random(28)
    for k, text in enumerate(_texts(r, 4000)):
        if "\r" in text:  # the block path leaves a chunk with a carriage return to the line path: not compared here
            text = text.replace("\r", "")
        _both(pure, [(text, 1)], f"text {k}: {text!r}")


def test_chunks_cut_at_every_line_read_as_the_line_path_reads(pure: object) -> None:
    """A text scanned in two chunks, cut at every line: the layout, the mode and step a chunk ends in carry into the
    next, and the points of a block read before a line the regex reads come first."""
    r = random.Random(7)
    for k, text in enumerate(_texts(r, 160)):
        lines = text.replace("\r", "").split("\n")
        for cut in range(1, len(lines)):
            chunks = [("\n".join(lines[:cut]) + "\n", 1), ("\n".join(lines[cut:]), cut + 1)]
            _both(pure, chunks, f"text {k} cut at line {cut}: {text!r}")


def test_a_growing_file_reads_as_the_line_path_reads(tmp_path: Path, pure: object,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A log appended in pieces cut at any byte (a provisional last line read and taken back), CRLF and lone CR
    texts among them: after every piece both paths have read the same."""
    from trainlint.readers import open_source

    r = random.Random(5)
    for k in range(60):
        text = _block_text(r) if k % 3 else _epochs(r)
        if k % 10 == 4:
            text = text.replace("\n", "\r\n")
        data = text.encode("utf-8", "surrogatepass")
        paths = [tmp_path / f"{k}-{side}" / "trainer_0_log.txt" for side in ("blocks", "lines")]
        sources = []
        for p, blocks in zip(paths, (True, False), strict=True):
            p.parent.mkdir()
            p.write_bytes(b"")
            src = open_source(str(p), "coqui")
            if not blocks:
                src.reader._scan_blocks = src.reader._scan_lines
            sources.append(src)
        at = 0
        while at < len(data):
            piece = data[at:at + r.randint(1, 400)]
            at += len(piece)
            for p, src in zip(paths, sources, strict=True):
                with p.open("ab") as f:
                    f.write(piece)
                src.update()
            assert _view(sources[0].log) == _view(sources[1].log), f"text {k} at byte {at}: {text!r}"


@pytest.mark.corpus
def test_real_coqui_logs_read_as_the_line_path_reads(pure: object) -> None:
    """Every real Coqui log of the corpus (VITS, XTTS, notebook output), whole and cut into two chunks at 16 lines."""
    files = [f for f in COQUI_FILES if f.is_file()]
    if len(files) < 4:
        pytest.skip(f"the corpus is not available: {CORPUS} (set TRAINLINT_CORPUS)")
    for f in files:
        text = f.read_text("utf-8", "replace").replace("\r", "")
        lines = text.split("\n")
        _both(pure, [(text, 1)], str(f))
        for cut in range(1, len(lines), max(1, len(lines) // 16)):
            _both(pure, [("\n".join(lines[:cut]) + "\n", 1), ("\n".join(lines[cut:]), cut + 1)], f"{f} at {cut}")


@pytest.mark.corpus
def test_the_blocks_read_the_value_lines_of_a_real_vits_log(pure: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block path reads the real VITS log's blocks itself: its 12,405 points come from 2 layouts (21 training
    keys, 19 with a running average; 15 evaluation keys) and the regex reads none of its value lines one at a
    time (a block path that never matched would read the same series through them)."""
    if not VITS.is_file():
        pytest.skip(f"corpus file not available: {VITS}")
    calls = {"slow": 0, "evals": 0}
    slow, evals = pure.CoquiReader._slow_train, pure.CoquiReader._eval_value  # type: ignore[attr-defined]

    def counted_slow(self, *a):  # type: ignore[no-untyped-def]
        calls["slow"] += 1
        return slow(self, *a)

    def counted_evals(self, *a):  # type: ignore[no-untyped-def]
        calls["evals"] += 1
        return evals(self, *a)

    monkeypatch.setattr(pure.CoquiReader, "_slow_train", counted_slow)  # type: ignore[attr-defined]
    monkeypatch.setattr(pure.CoquiReader, "_eval_value", counted_evals)  # type: ignore[attr-defined]
    from trainlint.core.model import LogFile

    log = LogFile(path="x", format="coqui")
    reader = pure.CoquiReader(log)  # type: ignore[attr-defined]
    reader.scan(VITS.read_text("utf-8"), 1)
    assert sum(len(s) for s in log.series.values()) == 12405
    assert calls == {"slow": 0, "evals": 0}
    assert sorted((train, len(layout.keys), sum(layout.parens)) for (train, _), layout in reader._layouts.items()) \
        == [(False, 15, 0), (True, 21, 19)]


def test_long_blocks_and_many_layouts_are_bounded_and_read_as_the_line_path_reads(pure: object) -> None:
    """Blocks of 100 keys and 50 layouts (a key dropped from each in turn, the evaluations' the same): a reader
    makes at most 32 block patterns of at most 64 lines (a compiled line is about 1.1 KB) and reads the rest a line
    at a time, the same points as the line path, whole and in two chunks."""
    keys = [f"loss_{i}" for i in range(100)]
    lines = []
    for k in range(50):
        lines += [f"\x1b[1m   --> STEP: {k}/50 -- GLOBAL_STEP: {k * 10}\x1b[0m",
                  *(f"     | > {key}: {k}.{i:05d}  ({i}.5)" for i, key in enumerate(keys) if i != k), "",
                  "\x1b[1m > EVALUATION \x1b[0m", "", "  \x1b[1m--> EVAL PERFORMANCE\x1b[0m",
                  *(f"     | > avg_{key}: {k}.{i:05d} \x1b[0m(+0.5)" for i, key in enumerate(keys) if i != k), ""]
    text = "\n".join(lines) + "\n"
    _both(pure, [(text, 1)], "whole")
    _both(pure, [("\n".join(lines[:5000]) + "\n", 1), ("\n".join(lines[5000:]) + "\n", 5001)], "in two chunks")
    from trainlint.core.model import LogFile

    reader = pure.CoquiReader(LogFile(path="x", format="coqui"))  # type: ignore[attr-defined]
    reader.scan(text, 1)
    assert len(reader._layouts) == 32
    assert max(len(layout.keys) for layout in reader._layouts.values()) == 64
