"""The compiled text scanner (trainlint.core._ctext) reads Coqui logs exactly as CoquiReader's regex loop does.

Its numbers are the doubles float() returns, bit for bit; random Coqui texts made of the lines real logs hold and
of the near misses the regex refuses (colour codes, carriage returns, a tab, a non-ASCII byte, a quote, a
parenthesis, 16 digits) read identically by both paths, whole and in two chunks; so do damaged copies of every real
Coqui log (bit flips, cut tails, copied and dropped spans). Every real log of the corpus is compared through
`check` in tests/test_compiled_scanner.py.
"""

from __future__ import annotations

import collections
import random
import struct
from array import array
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS, FIXTURES, hf_lag_runs
from test_compiled_scanner import _mutants, _same_reading

COQUI_FILES = sorted([*CORPUS.glob("coqui_trainer_log/*"), *CORPUS.glob("trainproof/**/trainer_0_log.txt"),
                      FIXTURES / "runs" / "xtts-prefix" / "trainer_0_log.txt"])


def _ctext_reason() -> str | None:
    from trainlint.core import accel

    return None if accel.CTEXT is not None else accel.CTEXT_REASON


def test_the_pure_path_is_forced_for_the_text_scanner_too() -> None:
    """TRAINLINT_PURE=1 leaves CTEXT and CSTDOUT None, with the reason, as it does CSCAN."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    code = "from trainlint.core import accel; print(accel.CTEXT is None, accel.CSTDOUT is None, accel.STDOUT_REASON)"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "TRAINLINT_PURE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert r.stdout.startswith("True True TRAINLINT_PURE is set"), r.stdout


def _read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(compiled, pure) reads of one Coqui file in this process: the reader's CTEXT set to None for the second."""
    import trainlint.readers.coqui as coqui
    from trainlint.readers import read

    compiled = read(str(path), "coqui")
    with monkeypatch.context() as m:
        m.setattr(coqui, "CTEXT", None)
        pure = read(str(path), "coqui")
    return compiled, pure


def _scan_value(cell: str) -> tuple[int, list[float], list[float]]:
    """Where the scanner stopped in one training value line ``| > x: CELL  (CELL)``, and the value and average
    it read."""
    from trainlint.core import accel

    text = f"     | > x: {cell}  ({cell})\n"
    bufs = [tuple(array(t) for t in "ddIdddI")]
    from trainlint.core.model import Event
    from trainlint.readers.coqui import _SCANNED

    sink = accel.CTEXT.coqui_sink(Event, _SCANNED)
    pos, _, _, _ = accel.CTEXT.coqui_lines(text, 0, 1, 1, True, 5.0, float("nan"), False, 0.0, 0, 0, ["x"], [], sink,
                                           [])
    accel.CTEXT.coqui_flush(sink, bufs, [])
    return pos, list(bufs[0][1]), list(bufs[0][5])


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(width=32).map(lambda x: repr(float(x))),
    st.floats(allow_nan=False, allow_infinity=False).flatmap(
        lambda x: st.sampled_from(["%.3g", "%.5f", "%.16g", "%.17g", "%.4e", "%.15e", "%.0f"]).map(lambda f: f % x)),
    st.from_regex(r"[+-]?[0-9]{0,20}\.?[0-9]{0,20}([eE][+-]?[0-9]{0,5})?", fullmatch=True),
    st.text(alphabet="0123456789+-.eEnaifty_", min_size=1, max_size=12)))
def test_a_value_is_the_number_float_reads_or_left_to_python(cell: str) -> None:
    """Every value and average the scanner reads is the double float() returns (sign of zero and NaN's bits
    included); a number float() refuses, or reads only after dropping an underscore, stops the scanner there."""
    if _ctext_reason() is not None:
        pytest.skip(_ctext_reason())
    pos, values, avgs = _scan_value(cell)
    if pos == 0:  # left to the Python path
        return
    bits = struct.pack("<d", float(cell))
    assert [struct.pack("<d", v) for v in values + avgs] == [bits, bits], cell


_ESC = ["", "\x1b[1m", "\x1b[0m", "\x1b[4m\x1b[1m", "\x1b[0;39m", "\x1b[1", "\x1b["]
_NUMS = ["0.5", "3.01874", "-1e-05", "nan", "inf", "1_0", "1e999", "0.03243428096175194", "tensor", "", "2(", "0.5)",
         "12345678901234567890"]
_KEYS = ["loss", "loss_disc", "avg_loss", "grad_norm_0", "amp_scaler", "current_lr_0", "Layer missing", "9x", "é",
         "a.b", "loader_time"]


def _value_line(r: random.Random) -> str:
    pre = r.choice(["     ", "", "  ", "\t", " x ", r.choice(_ESC) + "   "])
    paren = r.choice(["", f"  ({r.choice(_NUMS)})", f" {r.choice(_ESC)}(+{r.choice(_NUMS)})", " (0.5", "(1) x",
                      " ( 0.5 )"])
    sep = r.choice([" ", "", ":", " " + r.choice(_ESC), "\t", "\x0c "])
    pad, end = r.choice(["", " ", "  ", chr(0xa0)]), r.choice(["", " ", "\r", " \r"])
    return f"{pre}| > {r.choice(_KEYS)}:{sep}{r.choice(_NUMS)}{pad}{paren}{end}"


def _header(r: random.Random, step: int) -> str:
    time = r.choice(["", "TIME: 2022-11-03 10:47:31 -- ", "TIME: 2022-1-03 10:47:31 -- ",
                     "TIME: 1969-02-28 23:59:59 -- ", "TIME: 0000-01-01 00:00:00 -- "])
    g = r.choice([str(step), str(step) + "0" * 14, "x"])
    return f"{r.choice(_ESC)}   --> {time}STEP: {step % 36}/36 -- GLOBAL_STEP: {g}{r.choice([*_ESC, ' T', ' -'])}"


_OTHER = ["", "\x1b[1m > EVALUATION \x1b[0m", "  \x1b[1m--> EVAL PERFORMANCE\x1b[0m", " > TRAINING (2022-11-03) ",
          "\x1b[4m\x1b[1m > EPOCH: 1/1000\x1b[0m", " --> /content/run", " > BEST MODEL : /c/best_model_1037.pth",
          " > CHECKPOINT : /c/checkpoint_50.pth", "Traceback (most recent call last):", " ! Run is kept in /c",
          " > Model restored from step 40", " > Keyboard interrupt detected", "\x1b[1m\x1b[0m", "   \r", "ünïcode",
          "\x1b[1m > TRAINING (2022) | > loss: 0.5", "  --> EVAL PERFORMANCE > EPOCH: 2/9", " --> Sx --> E",
          "a --> TIME", " Traceback (most recent call last):", "--> EVAL PERFORMANCE! Run is kept in",
          " > TRAINING ( \x1b[0m T", "x > EVALUATION", "> TRAINING (2022-11-03 10:47:31) -- STEP: 1/2",
          " > EVALUATIONS", "> EVALUATIONé", " > EPOCH: 12345678901234567/9", "> EPOCH: 3/4 ! x",
          " > BEST MODEL :   ", " > BEST MODEL : /c/best_model.pth \x1b[0m", "> CHECKPOINT : a__7_.pth_12.pth\x0c ",
          " > BEST MODEL : /c/x_99999999999999999999999.pth", " > BEST MODEL : /c/é_5.pth",
          " > CHECKPOINT : /c/a\x1b[0m | > loss: 1", "> BEST MODEL : /c/checkpoint_1e3.pth",
          " --> /c/run > Model restored from step 7", " --> /c/run >  EPOCH: 1/2", "x ! Run is kept", "x !Run"]


def _epochs(r: random.Random) -> str:
    """Epochs as Coqui writes them (training blocks, an evaluation, a best model), a line now and then a near miss:
    runs of lines the scanner reads, with state (step, evaluation step, keys) carried from one to the next."""
    lines, step = [], r.randrange(100)
    for epoch in range(r.randint(1, 4)):
        lines += [f"\x1b[4m\x1b[1m > EPOCH: {epoch}/9\x1b[0m", " --> /c/run", "",
                  "\x1b[1m > TRAINING (2022-11-03) \x1b[0m"]
        for _ in range(r.randint(1, 3)):
            local = r.randrange(36)
            step += r.randint(1, 40)
            lines.append(f"\x1b[1m   --> TIME: 2022-11-{r.randint(1, 28):02d} 10:47:31 -- STEP: {local}/36 -- "
                         f"GLOBAL_STEP: {step}\x1b[0m")
            lines += [f"     | > {k}: {r.random():.5f}  ({r.random() * 9:.5f})" for k in ("loss", "loss_disc", "lr")]
        lines += ["", "\x1b[1m > EVALUATION \x1b[0m", "", "  \x1b[1m--> EVAL PERFORMANCE\x1b[0m"]
        lines += [f"     | > {k}: {r.random():.5f} \x1b[0m(+{r.random():.5f})" for k in ("avg_loss", "avg_loss_disc")]
        lines.append(f" > BEST MODEL : /c/best_model_{step + 3}.pth")
    for _ in range(r.randint(0, 3)):
        lines[r.randrange(len(lines))] = r.choice([_value_line(r), _header(r, step), r.choice(_OTHER)])
    return "\n".join(lines) + r.choice(["", "\n", "\r\n"])


def _coqui_text(r: random.Random) -> str:
    if r.random() < 0.3:
        return _epochs(r)
    lines, step = [], r.randrange(100)
    for _ in range(r.randint(1, 60)):
        k = r.random()
        if k < 0.55:
            lines.append(_value_line(r))
        elif k < 0.7:
            step += r.randint(0, 30)
            lines.append(_header(r, step))
        else:
            lines.append(r.choice(_OTHER))
    return "\n".join(lines) + r.choice(["", "\n", "\r\n"])


def test_random_coqui_texts_read_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 texts of real Coqui lines and their near misses, read from a file by both paths: the same series
    (bytes), events, problems and facts. Lone carriage returns and a last line without its break included."""
    if _ctext_reason() is not None:
        pytest.skip(_ctext_reason())
    r = random.Random(28)
    p = tmp_path / "trainer_0_log.txt"
    for k in range(3000):
        text = _coqui_text(r)
        if k % 7 == 0:
            text = text.replace("\n", "\r", 1)
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
        a, b = _read_both(p, monkeypatch)
        _same_reading(a, b, f"text {k}: {text!r}")


def test_chunks_carry_the_mode_and_step_across(monkeypatch: pytest.MonkeyPatch) -> None:
    """One text scanned in two chunks, cut at every line, by both paths: the state a chunk ends in (training,
    evaluation, the step and wall time of the last header) is the one the next starts from."""
    if _ctext_reason() is not None:
        pytest.skip(_ctext_reason())
    import trainlint.readers.coqui as coqui
    from trainlint.core.model import LogFile

    r = random.Random(7)
    for k in range(200):
        text = _coqui_text(r) + "\n"
        lines = text.split("\n")
        for cut in range(1, len(lines)):
            head, tail = "\n".join(lines[:cut]) + "\n", "\n".join(lines[cut:])
            logs = []
            for pure in (False, True):
                with monkeypatch.context() as m:
                    if pure:
                        m.setattr(coqui, "CTEXT", None)
                    log = LogFile(path="x", format="coqui")
                    reader = coqui.CoquiReader(log)
                    reader.scan(head, 1)
                    reader.scan(tail, cut + 1)
                    logs.append(log)
            _same_reading(*logs, f"text {k} cut at line {cut}: {text!r}")


def _facts(log: object) -> list[tuple[str, object]]:
    return [(k, "nan" if v != v else v) for k, v in log.facts.items()]  # type: ignore[attr-defined]


def test_events_and_facts_come_as_the_regex_path_makes_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled scanner makes the epochs, evaluations and saved models it reads itself and hands back only the
    state they leave (the last step header, epoch, evaluation of a call): 1,000 texts of whole epochs and every
    real Coqui log give both paths the same events, each an Event with the same fields and types (a step a float,
    a line an int, the detail's keys in order), and the log's facts with the same values in the same order."""
    if _ctext_reason() is not None:
        pytest.skip(_ctext_reason())
    r = random.Random(11)
    p = tmp_path / "trainer_0_log.txt"
    texts = [("epochs", _epochs(r)) for _ in range(1000)]
    texts += [(str(f), f.read_text("utf-8", "replace")) for f in COQUI_FILES if f.is_file()]
    compared = 0
    for what, text in texts:
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
        a, b = _read_both(p, monkeypatch)
        assert _facts(a) == _facts(b), what
        assert [(type(e.step), type(e.line), list(e.detail)) for e in a.events] == \
            [(type(e.step), type(e.line), list(e.detail)) for e in b.events], what
        _same_reading(a, b, what)
        compared += len(a.events)
    assert compared > 1000, compared


@pytest.mark.corpus
def test_damaged_copies_of_real_coqui_logs_read_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bit flips (non-ASCII bytes, broken colour codes and numbers), cut tails (a provisional last line), copied and
    dropped spans of every real Coqui log: each read by both paths gives the same series, events, problems, facts."""
    if _ctext_reason() is not None:
        pytest.skip(_ctext_reason())
    files = [f for f in COQUI_FILES if f.is_file()]
    if len(files) < 4:
        pytest.skip(f"the corpus is not available: {CORPUS} (set TRAINLINT_CORPUS)")
    rnd = random.Random(28)
    for src in files:
        raw = src.read_bytes()
        for what, data in [("as is", raw), *_mutants(raw, rnd, 8)]:
            p = tmp_path / "trainer_0_log.txt"
            p.write_bytes(data)
            a, b = _read_both(p, monkeypatch)
            _same_reading(a, b, f"{src} {what}")
    print(f"coqui: {len(files) * 9} copies of {len(files)} files compared")


# -- the general stdout reader's line pass (trainlint.core._cstdout) ------------------------------------------------

def _cstdout_reason() -> str | None:
    from trainlint.core import accel

    return None if accel.CSTDOUT is not None else accel.STDOUT_REASON


def _read_stdout_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(compiled, pure) reads of one stdout file in this process: the reader's CSTDOUT set to None for the second."""
    import trainlint.readers.text_stdout as text_stdout
    from trainlint.readers import read

    compiled = read(str(path), "text")
    with monkeypatch.context() as m:
        m.setattr(text_stdout, "CSTDOUT", None)
        pure = read(str(path), "text")
    return compiled, pure


def _bar(r: random.Random, step: int, total: int) -> str:
    desc = r.choice(["", "", "Epoch 1/3: ", f"Epoch {step % 4}: ", "Evaluating: ", "Training: ", "1|5|Loss: 0.6489: ",
                     "7|12|Loss: nan: "])
    fill = r.choice(["", "▏", "█" * 3 + "▌", "#####", "𝟘"])
    post = r.choice(["", "", "", f", loss={r.random():.4f}", f", loss={r.random():.3f}, lr=1e-4, v_num=0",
                     f", loss={r.random():.3g}, epoch=1.0", ", train_loss_step=nan"])
    esc = r.choice(["", "", "", "\x1b[A", "\x1b[1m", "\x1b[", "\x08", "\x1b[0;32m", "\x1b[?25l"])
    pct = 100 * step // max(total, 1)
    line = f"{desc}{pct:3d}%|{fill:10s}| {step}/{total} [00:0{step % 10}<00:00, {r.random() * 1e3:.2f}it/s{post}]"
    at = len(line) if r.random() < 0.7 else r.randrange(len(line) + 1)  # a colour code anywhere, even in "%|"
    return line[:at] + esc + line[at:]


_STDOUT_OTHER = [
    "", " " * 48, "   \x1b[A", "\t", "\x0c", "\xa0 ", "\x1b[A", "\x08", "***** train metrics *****",
    "***** eval metrics *****",
    "  train_loss = 2.13", "  epoch = 3.0", "*****", "* note", "`Trainer.fit` stopped: `max_epochs=3` reached.",
    "GPU available: True (cuda), used: True", "GPU available: False, 50%|x| 1/2 [00:00<00:00]", "step 12: loss 1.5",
    "iter 3: loss 2.0, time 12.1ms, mfu 3.2%", "Traceback (most recent call last):", "KeyboardInterrupt",
    "Epoch 1/3", "16/16 ━━━━ 0s 2ms/step - loss: 0.41 - val_loss: 0.52", "50% | 1/2", "a %| b", "x %|= y",
    "{'train_runtime': '12.3', 'train_loss': '1.5', 'epoch': '3'}", "{'eval_loss': '1.2', 'epoch': '1.0'}",
    "1|5|Loss: 0.6489: 10%|█         | 5/50 [00:01<00:10,  4.5it/s]", "é 50%|é| 1/2 [00:00<00:00]",
    "\x1b[1m 30%|\x1b[0m=| 3/10 [00:00<00:00]", "%\x1b[A| 1/2 [00:00<00:00]", "=\x1b[A 5%|x| 1/2 [00:00<00:00]",
    # the strings `_line` looks for before a bar or a dict, inside one
    "100%|█| 2/2 [00:00<00:00]`Trainer.fit` stopped: `max_steps` reached.",
    " 50%|█| 1/2 [00:00<00:00] GPU available: True", "\x1b[1GPU available: True", "\x1b[2K 50%|█| 1/2 [00:00]\x1b[A",
    "\x1b[A\x08 50%|█| 1/2 [00:00]\x1b[A\x1b[", "\x1b[A{'loss': '1.0', 'epoch': '0.5'}\x1b[K", "\x1b[A \x1b[A",
    "{'loss': '1.0', 'x%|y': '2', 'epoch': '0.5'}", "{'a GPU available: True': '1', 'epoch': '0.5'}",
    "{'`Trainer.fit` stopped: x': '1', 'epoch': '0.5'}", "{'loss': '1.5', 'eval_x': '1', 'epoch': '0.5'}"]


def _stdout_text(r: random.Random) -> str:
    """An HF / tqdm / Lightning stdout: bars redrawn over each other, the blank line tqdm clears them with, dicts,
    metrics blocks, Lightning's lines, torchtune's bar, and near misses (colour codes, cursor moves, backspaces,
    broken escapes, ``%|`` and ``=`` split by a colour code, non-ASCII of each width)."""
    out, step, total = [], 0, r.choice([20, 300, 16])
    for _ in range(r.randint(1, 80)):
        k = r.random()
        if k < 0.55:
            step += r.randint(0, 2)
            out.append(_bar(r, step, total))
        elif k < 0.7:
            ep = (step + r.randint(-2, 2)) / max(total / 3, 1)
            loss = r.choice(["'1.5'", "1.5", "'nan'", "0.25"])
            # HF 5.x's quoted epoch or 4.x's rounded float; an evaluation dict after its bar's cursor move up
            epoch = r.choice([f"'{ep:.4g}'", f"'{ep:.4g}'", repr(round(ep, r.choice([2, 4]))), "'nan'", "'1e+20'"])
            head, key = r.choice([("", "loss"), ("", "loss"), ("\x1b[A", "eval_loss"), ("", "eval_loss"),
                                  (" ", "loss"), ("\x1b[A", "loss"), ("", "rewards/chosen"),
                                  ("", "a GPU available: True"), ("", "`Trainer.fit` stopped: x"), ("", "Loss")])
            out.append(f"{head}{{'{key}': {loss}, 'grad_norm': '{r.random():.4g}', 'learning_rate': '1e-05', "
                       f"'epoch': {epoch}}}")
        elif k < 0.75:  # the evaluation loop's nested bar, a bar restarting, a larger one (a new max_steps)
            at, of = r.choice([(r.randint(0, 16), 16), (r.randint(0, 3), total), (step, total * 2)])
            out.append(_bar(r, at, of) if r.random() < 0.5 else f"{100 * at // of:3d}%|█| {at}/{of} [00:00<00:00]")
        else:
            out.append(r.choice(_STDOUT_OTHER))
    if r.random() < 0.05:
        out.append(_bar(r, step, total) + "x" * (1 << 16) + r.choice(["", ", loss=0.5]", "="]))
    text = ""
    for line in out:
        text += line + r.choice(["\n", "\n", "\r", "\r", "\r\n", "\r\r\n"])
    return text[:-1] if r.random() < 0.2 else text


def test_random_stdout_texts_read_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 stdout texts of real bar, dict and metrics lines and their near misses, read from a file by both paths:
    the same series (bytes), events, problems and facts."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    r = random.Random(28)
    p = tmp_path / "train.log"
    for k in range(2000):
        text = _stdout_text(r)
        p.write_bytes(text.encode("utf-8"))
        a, b = _read_stdout_both(p, monkeypatch)
        _same_reading(a, b, f"text {k}: {text!r}")


def test_dict_lines_the_pure_loop_reads_without_line_are_read_as_line_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure redraw loop hands a line that is an HF dict as written straight to `_hf_dict`; a dict line that also
    holds ``%|`` and ``=`` (`_tqdm` reads it as a bar), one with an escape inside (cleaned first) and one over
    `MAX_MATCH_LINE` (cut first, its loss beyond the cut) still go through `_line`: both paths read the same, and
    the first and last of them give no loss."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    from trainlint.core.lines import MAX_MATCH_LINE

    lines = []
    for i in range(1, 9):
        lines += [f" {i * 10}%|█| {i}/10 [00:00<00:00, 5.00it/s]", f" {i * 10}%|█| {i}/10 [00:00<00:00, 6.00it/s]"]
        lines.append(f"{{'loss': '{i}.5', 'grad_norm': '0.{i}', 'epoch': '{i / 10:.4g}'}}")
    lines[5] = "{'loss': '9.25', 'a=b 50%|x| 1/2 [00:00]': '2', 'epoch': '0.2'}"  # `_tqdm` reads it as a bar
    lines[8] = "{'loss': '7.75'\x1b[K, 'grad_norm': '0.3', 'epoch': '0.3'}"
    lines[11] = "{'grad_norm': '0.4'," + " " * MAX_MATCH_LINE + "'loss': '6.5', 'epoch': '0.4'}"  # no loss once cut
    p = tmp_path / "train.log"
    p.write_text("\r".join(lines) + "\n", "utf-8")
    a, b = _read_stdout_both(p, monkeypatch)
    _same_reading(a, b, "dict lines")
    loss = next(s for s in b.series.values() if s.name == "loss")
    assert list(loss.values) == [1.5, 7.75, 5.5, 6.5, 7.5, 8.5], list(loss.values)
    assert list(loss.lines) == [3, 9, 15, 18, 21, 24], list(loss.lines)


def test_stdout_chunks_read_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    """One stdout text scanned in two chunks, cut at every line, by both paths: the pending bar and the metrics block a
    chunk ends in carry into the next."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    import trainlint.readers.text_stdout as text_stdout
    from trainlint.core.lines import split_lines
    from trainlint.core.model import LogFile

    r = random.Random(7)
    for k in range(150):
        lines = split_lines(_stdout_text(r))
        for cut in range(1, len(lines)):
            logs = []
            for pure in (False, True):
                with monkeypatch.context() as m:
                    if pure:
                        m.setattr(text_stdout, "CSTDOUT", None)
                    log = LogFile(path="x", format="text")
                    reader = text_stdout.TextStdoutReader(log)
                    reader.scan("\n".join(lines[:cut]) + "\n", 1)
                    reader.scan("\n".join(lines[cut:]), cut + 1)
                    reader.finish()
                    logs.append(log)
            _same_reading(*logs, f"text {k} cut at line {cut}: {lines!r}")


def test_stdout_lines_cut_at_any_length_read_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled pass looks for a line's break and its shape (``%|``, ``=``, ``|Loss: ``, ``GPU available: ``,
    `` `Trainer.fit` ``, a colour code, all blanks) in one pass over its first `MAX_MATCH_LINE` characters: with the
    limit at every length from 1 to 40 (each literal, ``%|`` and an escape cut anywhere), 200 random stdout texts read
    by both paths give the same series, events, problems and facts."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    import trainlint.readers.text_stdout as text_stdout
    from trainlint.core.model import LogFile

    r = random.Random(41)
    for k in range(200):
        text = _stdout_text(r)
        for most in range(1, 41):
            logs = []
            for pure in (False, True):
                with monkeypatch.context() as m:
                    m.setattr(text_stdout, "MAX_MATCH_LINE", most)
                    if pure:
                        m.setattr(text_stdout, "CSTDOUT", None)
                    log = LogFile(path="x", format="text")
                    reader = text_stdout.TextStdoutReader(log)
                    reader.scan(text, 1)
                    reader.finish()
                    logs.append(log)
            _same_reading(*logs, f"text {k} cut at {most} characters: {text!r}")


@pytest.mark.corpus
def test_damaged_copies_of_real_stdout_logs_read_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bit flips, cut tails (a provisional last line), copied and dropped spans of the gallery's stdout logs (HF,
    TRL, tqdm, Lightning, torchtune, nanoGPT, Keras): each read by both paths gives the same series, events, facts."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    files = sorted(p for p in (FIXTURES / "live").glob("*/*")
                   if p.suffix in (".log", ".txt", ".out") and p.stat().st_size)
    assert len(files) >= 10, files
    rnd = random.Random(28)
    for src in files:
        raw = src.read_bytes()
        for what, data in [("as is", raw), *_mutants(raw, rnd, 8)]:
            p = tmp_path / "train.log"
            p.write_bytes(data)
            a, b = _read_stdout_both(p, monkeypatch)
            _same_reading(a, b, f"{src} {what}")
    print(f"stdout: {len(files) * 9} copies of {len(files)} files compared")


_HF_KEYS = ["loss", "grad_norm", "learning_rate", "epoch", "eval_loss", "train_runtime", "rewards/chosen", "a b",
            "x" * 80, "x" * 81, "", "é", "𝟘", "k'", "k\n", "k:", "k,", "{", "}", "k': 'v", " ", "'"]
_HF_VALUES = ["3.709", "1e-05", "-0.5", "+.5", "5.", ".5e+3", "0", "nan", "-inf", "Infinity", "infinity", "INF",
              "NaN", "Inf", "1e", "1e+", "e5", ".", "-", "", "1.2.3", "1_0", "١٢", "0x10", "None", "[1, 2]", "3.7x",
              "12345678901234567890", "in", "nanx", "1,5", "'", " 1", "1 "]


def _hf_line(r: random.Random) -> str:
    """A dict line as HF Trainer prints it (4.x bare floats, 5.x quoted strings), or a near miss of each piece."""
    pairs = []
    for _ in range(r.randint(1, 5)):
        key = r.choice(_HF_KEYS) if r.random() < 0.1 else r.choice(_HF_KEYS[:7])
        value = r.choice(_HF_VALUES) if r.random() < 0.1 else r.choice(_HF_VALUES[:12])
        q1, q2 = r.choice([("'", "'")] * 4 + [("", "")] * 4 + [("'", ""), ("", "'")])
        colon = r.choice(["': "] * 12 + ["':", "' : ", "':  "])
        pairs.append(f"'{key}{colon}{q1}{value}{q2}")
    sep = r.choice([", "] * 12 + [",", " , ", ",  ", "; "])
    head, tail = r.choice([("{", "}")] * 12 + [(" {", "}"), ("{", "} "), ("{", "}x"), ("{", ""), ("{{", "}}"),
                                               ("{", ",}"), ("{", "}}")])
    return head + sep.join(pairs) + tail


def test_hf_pairs_are_the_regex_pairs() -> None:
    """`hf_pairs` returns, for every plain dict line, exactly the (key, value, ends with a quote) of `_HF_PAIR`'s
    matches, and None for a line it does not read (then the regex reads it): 30,000 random dict lines of real keys
    and values and near misses of each piece (quotes, colon, separator, braces, numbers the regex reads in part or
    not at all, keys of 81 characters, non-ASCII digits)."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    from trainlint.core import accel
    from trainlint.readers.text_stdout import _HF_PAIR

    r = random.Random(28)
    read = 0
    for _ in range(30000):
        line = _hf_line(r)
        got = accel.CSTDOUT.hf_pairs(line)
        if got is None:
            continue
        read += 1
        want = [(m.group("key"), m.group("v"), m.group(0).endswith("'")) for m in _HF_PAIR.finditer(line)]
        assert got == want, line
    print(f"{read} plain dict lines compared")
    assert read >= 3000, read  # the plain shape is most of what the generator makes: the claim has lines behind it


def _bar_line(r: random.Random) -> str:
    """A tqdm bar line as the Trainer's stdout holds it (a blank description, no postfix), or a near miss of each piece
    `_TQDM` reads: a description, 4 digits or a non-ASCII digit, a bar of 200 or 201 characters or with a ``|``,
    tabs and 5 spaces, 16 digits, a postfix, a bracket of 2,000 or 2,001 characters or never closed."""
    def pick(common: list[str], rare: list[str]) -> str:
        return r.choice(rare) if r.random() < 0.08 else r.choice(common)

    lead = pick(["", " ", "  "], ["\t", " x ", "Epoch 2: ", "Evaluating: ", "   ", "\xa0", "1"])
    pct = pick(["7", "10", "100"], ["1000", "٣", "", "07", "0000"])
    fill = pick(["▋         ", "█" * 10, "", "##########", "𝟘"], ["x" * 200, "x" * 201, "a|b", "\x1b[A"])
    sp1, sp2 = (pick([" ", ""], ["    ", "     ", "\t", "\xa0", "\n"]) for _ in range(2))
    pos, total = (pick([str(r.randrange(10 ** r.randint(1, 6))), "300"], ["1" * 15, "1" * 16, "٣", "", "-1", "1.5"])
                  for _ in range(2))
    inner = pick(["00:00<00:00, 1054.00it/s", "00:01<00:10,  4.5it/s", "", "00:00<?, ?it/s"],
                 ["a, b, c", "00:00<00:00, 5it/s, loss=0.5", "x" * 2000, "x" * 2001, ", , ", "a,b,c", ", ",
                  "a, b" + "x" * 1996, "x" * 1997 + ", b"])
    close = pick(["]", "]"], ["", "]x", "]]", "] 50%|x| 1/2 [a]"])
    line = f"{lead}{pct}%|{fill}|{sp1}{pos}/{total}{sp2}[{inner}{close}"
    return line[:r.randrange(len(line) + 1)] if r.random() < 0.03 else line


def _bar_lines() -> list[str]:
    """Every line holding ``%|`` of the gallery's stdout logs, as the reader's split gives them."""
    from trainlint.core.lines import split_lines

    out = []
    for p in sorted(FIXTURES.glob("live/*/*")):
        if p.suffix in (".log", ".txt", ".out") and p.stat().st_size:
            out += [ln for ln in split_lines(p.read_text("utf-8", "replace")) if "%|" in ln]
    return out


def test_plain_bar_is_the_regex_bar() -> None:
    """`plain_bar` returns (n, total) only when `_TQDM`'s search matches after a description of spaces only and
    its bracket splits at ``, `` into fewer than three parts (`_tqdm` then reads no postfix), and those are the
    match's numbers; None for any other line, which the regex path reads. Every such plain bar is read but those with
    a tab, a no-break space, a line break or a non-ASCII digit (``\\s`` and ``\\d`` beyond ASCII): the gallery's bar
    lines and 30,000 random bar lines and near misses. A line it would read wrongly (a description, a postfix, a
    number cut) fails here."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    from trainlint.core import accel

    read, plain = _bars_read_as_the_regex(accel.CSTDOUT.plain_bar)
    print(f"{len(_bar_lines())} gallery bar lines; {read} plain bars read of {plain}")
    assert read >= 10000, read


def _bars_read_as_the_regex(plain_bar: Callable[[str], tuple[int, int] | None]) -> tuple[int, int]:
    """``plain_bar`` over the gallery's bar lines and 30,000 random ones: each line it reads is `_TQDM`'s match
    after a description of spaces with no postfix `_tqdm` reads, with its numbers; each such bar it leaves holds a
    blank or digit ``\\s`` / ``\\d`` take beyond ASCII's. (Lines read, such bars.)"""
    from trainlint.readers.text_stdout import _TQDM

    r = random.Random(28)
    read = plain = 0
    for line in _bar_lines() + [_bar_line(r) for _ in range(30000)]:
        m = _TQDM.search(line)
        want = None
        if (m is not None and line[:m.start()] == " " * m.start()
                and len(m.group("inner").split(", ", 2)) < 3):
            want = (int(m.group("n")), int(m.group("total")))
            plain += 1
        got = plain_bar(line)
        if got is not None:
            read += 1
            assert got == want, line
        elif want is not None:
            assert any(c in line for c in "\t\xa0\n٣"), line
    return read, plain


def test_the_pure_plain_bar_is_the_regex_bar() -> None:
    """The pure path's twin of `plain_bar` (`_plain_bar`: `_PLAIN_BAR` matched, its bracket holding fewer than two
    ``, ``: the position alone, without `_tqdm`) reads a line only when `_TQDM`'s search matches it after a
    description of spaces and `_tqdm` would read no postfix, with the same numbers; it declines what ``\\s`` and
    ``\\d`` take beyond ASCII. The gallery's bar lines and 30,000 random bar lines and near misses; runs without the
    compiled module too."""
    from trainlint.readers.text_stdout import _plain_bar

    read, plain = _bars_read_as_the_regex(_plain_bar)
    assert read >= 10000, (read, plain)


def test_hf_dict_is_the_python_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """`hf_dict` gives, for every plain dict line, what `_hf_parsed` makes of it without the compiled module (the
    keys but ``epoch``, the values' doubles bit for bit, the first epoch pair, the kind: closing summary, evaluation
    or train), and None for a line it does not read: the gallery's dict lines and 30,000 random dict lines of real
    keys and values and near misses (``train_runtime`` and ``eval_`` keys, repeated epochs, numbers of 20 digits)."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    from trainlint.core import accel
    from trainlint.core.lines import split_lines
    from trainlint.readers import text_stdout

    def bits(parsed: tuple) -> tuple:
        keys, values, epoch, kind = parsed
        return keys, [struct.pack("<d", v) for v in values], epoch, kind

    r = random.Random(29)
    keys = ["loss", "epoch", "eval_loss", "train_runtime", "eval_", "evalx", "train_runtimes", "Epoch", "epoch "]
    lines = [ln for p in sorted(FIXTURES.glob("live/*/*")) if p.suffix in (".log", ".txt", ".out")
             for ln in split_lines(p.read_text("utf-8", "replace")) if ln.startswith("{'")]
    for _ in range(30000):
        line = _hf_line(r)
        if r.random() < 0.3 and line.startswith("{'"):
            line = "{'" + r.choice(keys) + "': '1.5', " + line[1:]
        lines.append(line)
    read = {0: 0, 1: 0, 2: 0}
    for line in lines:
        got = accel.CSTDOUT.hf_dict(line)
        if got is None:
            assert accel.CSTDOUT.hf_pairs(line) is None, line
            continue
        with monkeypatch.context() as m:
            m.setattr(text_stdout, "CSTDOUT", None)
            want = text_stdout._hf_parsed(line)
        assert bits(got) == bits(want), line
        read[got[3]] += 1
    print(f"{len(lines)} dict lines, read by kind: {read}")
    assert min(read.values()) >= 500, read


def test_a_series_with_a_wall_time_takes_the_dict_points_as_the_python_loop_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`hf_append` appends a dict's points only while none of its series holds a wall time or a record (the reader
    never gives one, `Series.append` would keep them in step): the gallery's HF stdout read in two halves by both
    paths, every series given a wall time and then a record between them, reads the same."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    import trainlint.readers.text_stdout as text_stdout
    from trainlint.core.lines import split_lines
    from trainlint.core.model import LogFile

    lines = split_lines((FIXTURES / "live" / "hf-healthy" / "train.log").read_text("utf-8"))
    half = len(lines) // 2
    for extra in ({"wall": 1.5}, {"record": 3}):
        logs = []
        for pure in (False, True):
            with monkeypatch.context() as m:
                if pure:
                    m.setattr(text_stdout, "CSTDOUT", None)
                log = LogFile(path="x", format="text")
                reader = text_stdout.TextStdoutReader(log)
                reader.scan("\n".join(lines[:half]) + "\n", 1)
                assert log.series, "the first half holds dicts"
                for s in log.series.values():
                    s.append(s.steps[-1], s.values[-1], half, **extra)
                before = {k: len(s) for k, s in log.series.items()}
                reader.scan("\n".join(lines[half:]), half + 1)
                reader.finish()
                logs.append(log)
        _same_reading(*logs, f"hf-healthy with a {extra}")
        grown = [k for k, n in before.items() if len(logs[0].series[k]) > n]
        assert len(grown) >= 3, grown  # dict points went to series holding the wall time or record


def _hf_dict_lines(path: Path) -> list[tuple[int, tuple[str, ...], int]]:
    """(line number, keys, kind) of each HF dict line of a stdout log, as the pure reader parses it."""
    from trainlint.core.lines import split_lines
    from trainlint.readers import text_stdout

    out = []
    for n, line in enumerate(split_lines(path.read_text("utf-8", "replace")), 1):
        line = text_stdout.clean(line)
        if "{'" in line and text_stdout._HF_DICT.match(line):
            keys, _, _, kind = text_stdout._hf_parsed(line)
            out.append((n, keys, kind))
    return out


def test_the_compiled_pass_reads_the_plain_hf_dicts_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """`stdout_scan` reads an HF dict in C once the steps' mode is the bar's: Python's `_hf_dict` reads only the two
    train dicts before it is decided, the first dict of each new set of keys (Python makes the series) and the
    closing ``train_runtime`` summary, on every HF and TRL stdout of the gallery (the evaluation dicts, after a cursor
    move up, included), and both paths give the same reading. Fails when the C path declines a dict it could read
    (67 Python calls on hf-healthy instead of 4)."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    import trainlint.readers.text_stdout as text_stdout

    files = sorted(p for p in (FIXTURES / "live").glob("*/train.log") if p.parent.name.startswith(("hf-", "trl-")))
    assert len(files) >= 9, files
    read_together = 0
    for path in files:
        dicts = _hf_dict_lines(path)
        seen: set[tuple[str, ...]] = set()
        want = []
        for i, (n, keys, kind) in enumerate(dicts):
            if i < 2 or kind == 2 or keys not in seen:
                want.append(n)
            seen.add(keys)
        compiled_calls: list[int] = []
        pure_calls: list[int] = []
        batched: list[int] = []
        python_hf_dict, python_hf_batch = text_stdout.TextStdoutReader._hf_dict, text_stdout.TextStdoutReader._hf_batch

        def hf_dict(self: object, line: str, n: int, st: object, python_hf_dict: object = python_hf_dict,
                    compiled_calls: list[int] = compiled_calls, pure_calls: list[int] = pure_calls) -> None:
            (pure_calls if text_stdout.CSTDOUT is None else compiled_calls).append(n)
            python_hf_dict(self, line, n, st)

        def hf_batch(self: object, batch: list, st: object, python_hf_batch: object = python_hf_batch,
                     pure_calls: list[int] = pure_calls, batched: list[int] = batched) -> None:
            before = len(pure_calls)
            python_hf_batch(self, batch, st)
            if len(pure_calls) == before:  # read together, no `_hf_dict` call each
                pure_calls.extend(n for _, _, n in batch)
                batched.append(len(batch))

        with monkeypatch.context() as m:
            m.setattr(text_stdout.TextStdoutReader, "_hf_dict", hf_dict)
            m.setattr(text_stdout.TextStdoutReader, "_hf_batch", hf_batch)
            a, b = _read_stdout_both(path, monkeypatch)
        assert sorted(pure_calls) == [n for n, _, _ in dicts], path  # the pure path reads every one, once
        assert compiled_calls == want, (path, len(dicts))
        _same_reading(a, b, str(path))
        read_together += sum(batched)
    assert read_together > 100  # the pure path's batches were taken, not only declined


def test_the_compiled_hf_lag_is_the_python_one() -> None:
    """`hf_lag` (the C `_hf_lag` the compiled pass uses over the state's fields) gives every step and leaves every
    state the Python `_hf_lag` does, bit for bit, over 3,000 runs of dicts as HF prints them (4.x rounded floats and
    5.x 4-digit strings; 1 to 700 steps per epoch, bars of 5 to 2,000 steps, a bar lagging 0 to 3 steps, ahead up to
    2, an evaluation dict, a resume, a nan or inf epoch). Fails with the last dict's epoch compared with >=."""
    if _cstdout_reason() is not None:
        pytest.skip(_cstdout_reason())
    import copy

    from trainlint.core import accel
    from trainlint.core.model import LogFile
    from trainlint.readers.text_stdout import TextStdoutReader, _State

    def bits(st: _State) -> tuple:
        return (st.hf_spe, st.hf_last, [struct.pack("<3d", *e) for e in st.hf_epochs], st.bar_total, st.bar_step)

    reader = TextStdoutReader(LogFile(path="x", format="text"))
    for k, bar_total, calls in hf_lag_runs(odd=True):
        st = _State(bar_total=bar_total)
        ref = copy.deepcopy(st)
        for m, bar, is_eval in calls:
            got = accel.CSTDOUT.hf_lag(st, m, bar, is_eval)
            want = reader._hf_lag(ref, m, bar, is_eval)
            assert (struct.pack("<d", got), bits(st)) == (struct.pack("<d", want), bits(ref)), (k, m, bar)
            assert st == ref, (k, m, bar)


def _plain_hf_text(r: random.Random) -> str:
    """A stdout whose chunk `_scan_redraws` reads as plain (no "=", no long line, escapes without L, G or a
    backquote): bars without a postfix, tqdm's blank, train dicts of one set of keys and their near misses (keys
    reordered, one more, one repeated, an `epoch` elsewhere, values float() refuses or reads as nan / inf, the
    closing summary, evaluation dicts plain or after a cursor move) and lines `_line` reads between them. In half of
    them, the values are quoted as 5.x quotes them (`_hf_quoted_columns`' shape) but for one dict of about 25; bars
    sometimes nested (a smaller total), longer (a larger one), described ("Epoch 2: ") or with a postfix of no pair."""
    out, step, total = [], 0, r.choice([40, 300])
    keys = r.choice([("loss", "grad_norm", "learning_rate"), ("loss",), (), ("rewards/chosen", "loss")])
    quoted = r.random() < 0.5
    for _ in range(r.randint(1, 120)):
        k = r.random()
        if k < 0.45:
            step += r.choice([0, 1, 2, 2, 3, -3]) if step > 3 else 2
            n, of, desc, tail = step, total, "", ""
            odd = r.random()
            if odd < 0.03:
                n, of = r.randint(0, 16), 16  # an evaluation loop's bar under the training bar
            elif odd < 0.04:
                total = of = total * 2  # a longer bar from here on
            elif odd < 0.05:
                desc = "Epoch 2: "
            elif odd < 0.06:
                tail = ", loss 1.5, lr 3"
            out.append(f"{desc}{100 * n // of:3d}%|\u258c    | {n}/{of} [00:0{n % 10}<00:00, "
                       f"{r.random() * 1e3:.2f}it/s{tail}]" + r.choice(["", "", "\x1b[A"]))
        elif k < 0.5:
            out.append(" " * r.choice([0, 30, 50]))
        elif k < 0.85:
            if r.random() < 0.8:  # HF's bar moves before most dicts
                step += r.randint(1, 3)
                out.append(f"{100 * step // total:3d}%|\u258c    | {step}/{total} [00:00<00:00, 9.1it/s]")
            ep = (step + r.randint(-1, 1)) / (total / 3)
            epoch = r.choice([f"'{ep:.4g}'", f"'{ep:.4g}'", repr(round(ep, 2)), "'nan'"])
            if quoted:
                epoch = f"'{max(ep, 1e-3):.4g}'"
            pairs = [(key, r.choice([f"'{r.random():.4g}'", f"{r.random():.4g}", "'nan'", "'-inf'", "'1e-05'"]
                                    if not quoted or r.random() < 0.01 else [f"'{r.random() * 9:.4g}'", "'1e-05'"]))
                     for key in keys]
            how = r.random() if r.random() < 0.25 else 1.0  # a near miss in one dict of about 25
            if how < 0.04:
                pairs.reverse()
            elif how < 0.07:
                pairs.append(("extra", "'2'"))
            elif how < 0.10 and pairs:
                pairs.append((pairs[0][0], "'3.5'"))  # a key again after `epoch` below
            elif how < 0.12:
                pairs.insert(0, ("epoch", epoch))
            elif how < 0.14 and pairs:
                pairs[-1] = (pairs[-1][0], "'1.2.3'")  # float() refuses, parse_number reads
            elif how < 0.16:
                pairs = [("eval_loss", "'1.5'")]
            elif how < 0.17:
                pairs = [("train_runtime", "'12.5'"), ("train_loss", "'1.1'")]
            body = ", ".join(f"'{key}': {v}" for key, v in pairs)
            tail = "" if how < 0.10 and how >= 0.07 else f", 'epoch': {epoch}"
            head = "\x1b[A" if how >= 0.16 and how < 0.165 else ""
            out.append(f"{head}{{{body}{tail}}}".replace("{, ", "{"))
        elif k < 0.9:
            out.append(r.choice(["step 12: loss 1.5", "Traceback (most recent call last):", "some warning",
                                 "***** train metrics *****", "  train_loss : 2.13", "Saving model checkpoint"]))
    return "".join(line + r.choice(["\n", "\r", "\r", "\r\n"]) for line in out)


def test_hf_dicts_read_together_as_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure path's batches of HF dicts (`_hf_batch`, `_hf_columns`) give the reading `_hf_dict` gives one dict
    at a time, and the compiled path's, over 1,500 plain stdouts of dicts and their near misses; a batch was read
    together (not only declined) in most of them, by the split at quotes (`_hf_quoted_columns`) in hundreds, with
    more than one set of keys (`_hf_groups`: evaluation dicts among train dicts) in over a hundred, and the bars
    before a batch's dicts were read together (`_bar_steps`) in most, declined in some."""
    import trainlint.readers.text_stdout as text_stdout
    from trainlint.readers import read

    def one_at_a_time(self: object, batch: list, st: object) -> None:
        for bar, line, n in batch:
            if bar is not None:
                st.pending_bar = text_stdout.clean(bar)  # type: ignore[attr-defined]
            self._settle_bar(st)  # type: ignore[attr-defined]
            self._hf_dict(line, n, st)  # type: ignore[attr-defined]

    r = random.Random(2812)
    p = tmp_path / "train.log"
    taken = 0
    batch_columns, split_columns = text_stdout._hf_columns, text_stdout._hf_quoted_columns
    bar_steps, together_ = text_stdout.TextStdoutReader._bar_steps, text_stdout.TextStdoutReader._hf_together
    groups_ = text_stdout._hf_groups

    def counted_groups(lines: list[str]) -> object:
        got = groups_(lines)
        paths.update(["sets declined" if got is None else "sets read"])
        return got
    paths: collections.Counter[str] = collections.Counter()
    for k in range(1500):
        text = _plain_hf_text(r)
        p.write_bytes(text.encode("utf-8"))
        with monkeypatch.context() as m:
            m.setattr(text_stdout, "CSTDOUT", None)
            took: list[bool] = []
            m.setattr(text_stdout, "_hf_columns", lambda lines, took=took: (
                None if (got := batch_columns(lines)) is None else took.append(True) or got))
            m.setattr(text_stdout, "_hf_quoted_columns", lambda lines: (
                None if (got := split_columns(lines)) is None else paths.update(["split"]) or got))
            m.setattr(text_stdout.TextStdoutReader, "_bar_steps", lambda self, st, bars: (
                paths.update(["bars" if (got := bar_steps(self, st, bars)) is not None else "bars declined"]) or got))
            m.setattr(text_stdout.TextStdoutReader, "_hf_together", lambda self, batch, groups, st: (
                paths.update(["sets" if len(groups) > 1 else "one set"]), together_(self, batch, groups, st)))
            m.setattr(text_stdout, "_hf_groups", counted_groups)
            together = read(str(p), "text")
            taken += bool(took)
            m.setattr(text_stdout.TextStdoutReader, "_hf_batch", one_at_a_time)
            alone = read(str(p), "text")
        _same_reading(together, alone, f"text {k}: {text!r}")
        if _cstdout_reason() is None:
            _same_reading(read(str(p), "text"), alone, f"compiled, text {k}: {text!r}")
    assert taken > 750, taken  # 867
    # the split at quotes, the bars read together or declined, and batches of several sets of keys (the evaluation
    # dicts among the train dicts)
    assert paths["split"] > 500 and paths["bars"] > 1000 and paths["bars declined"] > 50 and paths["sets"] > 50, paths
    assert paths["sets declined"] > 100, paths  # then runs of one first key (`_hf_rest`)


def test_the_split_at_quotes_reads_what_findall_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_hf_quoted_columns` (one `str.split` at the quotes of a batch of 5.x dicts) gives what `_hf_columns`' `findall`
    gives, or declines: over 20,000 batches with a character replaced, inserted or dropped (a quote, a brace, a
    blank, an underscore, a word or non-ASCII digit, a sign…) and keys up to 81 characters long. Fails with any of
    its checks on the values' characters, the key lengths or the separators dropped."""
    from trainlint.readers import text_stdout

    split_columns = text_stdout._hf_quoted_columns
    monkeypatch.setattr(text_stdout, "_hf_quoted_columns", lambda lines: None)
    r = random.Random(2805)
    split = 0
    marks = "'{}:, .eE+-_01234567890123456789nafiInf\t\u0661\u00b2x"
    for k in range(20000):
        keys = r.choice([["loss", "grad_norm", "learning_rate"], ["loss"], ["k" * r.choice([80, 81])], ["a b", "c"]])
        lines = []
        for j in range(r.randint(1, 6)):
            values = [f"{r.random() * 10 ** r.randint(-6, 4):.4g}" for _ in keys]
            lines.append("{" + ", ".join(f"'{key}': '{v}'" for key, v in zip(keys, values, strict=True))
                         + f", 'epoch': '{(j + 1) / 7:.4g}'}}")
        if r.random() < 0.9:
            i = r.randrange(len(lines))
            at = r.randrange(len(lines[i]) + 1)
            how = r.random()
            mark = r.choice(marks)
            lines[i] = (lines[i][:at] + mark + lines[i][at + 1:] if how < 0.4 else
                        lines[i][:at] + mark + lines[i][at:] if how < 0.8 else lines[i][:at] + lines[i][at + 1:])
        got = split_columns(lines)
        if got is not None:
            assert got == text_stdout._hf_columns(lines), (k, lines)
            split += 1
    assert split > 3000, split


def test_clean_is_the_control_regex() -> None:
    """`clean` (cursor moves up removed by `str.replace` when no other escape is left) gives `_CONTROL`'s removal of
    every escape, over 20,000 random strings of escapes, their pieces and text. Fails when the replace is taken with
    another escape or a backspace left."""
    from trainlint.readers.text_stdout import _CONTROL, clean

    r = random.Random(2806)
    pieces = ["\x1b[A", "\x1b[A", "\x1b", "[", "A", "\x1b[1m", "\x1b[0;32m", "\x08", "1", ";", "?", " 12%|", "\n", "x"]
    replaced = 0
    for k in range(20000):
        line = "".join(r.choice(pieces) for _ in range(r.randint(0, 12)))
        assert clean(line) == _CONTROL.sub("", line), (k, line)
        replaced += "\x1b[A" in line and "\x1b" not in line.replace("\x1b[A", "") and "\x08" not in line
    assert replaced > 1000, replaced
