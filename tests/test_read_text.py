"""Plain-text trainer stdout: the patterns users commit, each value at its line."""

from __future__ import annotations

from conftest import LOGS, corpus, hf_lag_runs, series
from trainlint.core.model import EventKind, Role
from trainlint.readers import detect, read


def test_llmc_slurm_log_values_and_kill():
    log = read(str(LOGS / "gpt2_train.11672114.log"))
    loss, norm = series(log, "loss"), series(log, "norm")
    assert (len(loss), loss.steps[-1], loss.values[-1]) == (750, 750, 4.763922)
    assert norm.role == Role.GRAD_NORM and series(log, "val loss").role == Role.EVAL_LOSS
    loc = log.locate(loss, 749)
    text = (LOGS / "gpt2_train.11672114.log").read_text().splitlines()[loc.line - 1]
    assert text[loc.column - 1:loc.end_column - 1] == "4.763922"
    assert log.facts["max_steps"] == 19560
    assert any(e.kind == EventKind.INTERRUPTED and "TIME LIMIT" in e.text for e in log.events)


def test_oom_at_startup_has_no_series():
    p = LOGS / "gpt2_train.11672087.log"
    d = detect(str(p))
    assert d.format is None or read(str(p)).by_role(Role.TRAIN_LOSS) == []


def test_llmc_short_form_and_modded_nanogpt():
    log = read(str(corpus("text_logs/SiddanthEmani__GPT-2-124M-CUDA__log124M__main.log")))
    assert series(log, "trl").role == Role.TRAIN_LOSS and series(log, "tel").role == Role.EVAL_LOSS
    assert len(series(log, "trl")) == 19552
    modded = read(str(corpus("text_logs/KellerJordan__modded-nanogpt__records__track_1_short__2024-10-10_Muon__"
                             "eb5659d0-fb6a-49e5-a311-f1f89412f726.txt")))
    tl = series(modded, "train_loss")
    assert len(tl) == 6200 and series(modded, "val_loss").role == Role.EVAL_LOSS
    # step_avg:nanms is a timing field: NaN there is not a loss value
    assert all(s.role == Role.OTHER for s in modded.series.values() if s.name == "step_avg")


def test_build_nanogpt_and_hf_dicts():
    log = read(str(corpus("text_logs/AGNDM__build-nanogpt__log_bigger__log.txt")))
    assert len(series(log, "train")) == 19073 and series(log, "val").role == Role.EVAL_LOSS
    hf = read(str(corpus("text_logs/NguyenThaoVi0702__whisper_app_test__finetune-whisper-grok__error.py@ee5f675")))
    loss = series(hf, "loss")
    assert len(loss) == 39 and loss.step_basis == "index" and list(loss.steps[:3]) == [1, 2, 3]


def test_epoch_prints_and_mmengine():
    log = read(str(LOGS / "cafa_out.log"))
    assert series(log, "Train Loss").steps[0] == 80 and series(log, "Validation Loss").role == Role.EVAL_LOSS
    mm = read(str(corpus("text_logs/tranquanglam123__MLAI_Final__20230523_070719.log")))
    loss = series(mm, "loss")
    assert len(loss) == 80 and loss.steps[0] == 50 and series(mm, "grad_norm").role == Role.GRAD_NORM


def test_lines_before_the_first_step_are_not_measurements(tmp_path):
    p = tmp_path / "train.log"
    p.write_text("config: lr=0.1 loss: 3.0\nstep 1, loss: 2.5\nlr: 0.01\nstep 2, loss: 2.4\n")
    log = read(str(p))
    assert list(series(log, "loss").steps) == [1, 2] and list(series(log, "lr").steps) == [1]


def _full_search_hf_lag(self, st, m, step, is_eval=False):
    """TextStdoutReader._hf_lag as it was before issue 28: the search for the steps per epoch re-checks every kept
    epoch at every dict. The reference the incremental search is held to."""
    import math

    # m: the dict's first epoch pair (key, value text, quoted) or None
    epoch = m[1] if m is not None else None
    try:
        ep = float(epoch) if epoch is not None else 0.0
    except ValueError:
        ep = 0.0
    if ep <= 0 or epoch is None or m is None or st.hf_spe < 0:
        return step
    if m[2]:
        half = 0.5 * 10.0 ** (math.floor(math.log10(ep)) - 3) + 1e-12
    else:
        half = 0.5 * 10.0 ** -(len(epoch.split(".")[1]) if "." in epoch else 0) + 1e-12
    st.hf_epochs.append((ep - half, ep + half, step))
    del st.hf_epochs[:-16]
    spe = max(1, int(st.hf_spe))
    limit = max(st.bar_total, 1) * 4 + 64
    while spe <= limit and not all(math.floor(hi * spe) >= max(math.ceil(lo * spe), bar)
                                   for lo, hi, bar in st.hf_epochs):
        spe += 1
    if spe > limit:
        st.hf_spe = -1.0
        return step
    st.hf_spe = float(spe)
    if 2 * half * spe < 1:
        step = max(step, float(round(ep * spe)))
    last = st.hf_last
    if not is_eval:
        if last is not None and step <= last[0] and ep > last[1]:
            step = last[0] + 1
        st.hf_last = (step, ep)
    return step


def _full_search_hf_lags(self, st, epochs, quoted, steps, evals):
    """`_full_search_hf_lag` of each dict in turn, as `TextStdoutReader._hf_lags` takes them."""
    return [_full_search_hf_lag(self, st, None if epoch is None else ("epoch", epoch, mark), step, is_eval)
            for epoch, mark, step, is_eval in zip(epochs, quoted, steps, evals, strict=True)]


def test_the_steps_per_epoch_search_gives_the_full_search_steps(monkeypatch):
    """`_hf_lags` checks only the new epoch against the steps per epoch found last (they satisfy every epoch kept
    before it): every HF stdout of the gallery, the population and the corpus gets the steps, values, lines and
    facts the full search gives."""
    from conftest import CORPUS, FIXTURES
    from trainlint.readers import text_stdout

    roots = [FIXTURES / "live", FIXTURES / "population", CORPUS]
    files = sorted(p for root in roots for ext in ("log", "txt", "out") for p in root.rglob(f"*.{ext}")
                   if p.is_file() and "'epoch'" in p.read_text(errors="replace"))
    assert len(files) >= 20, files

    def view(log):  # bytes: a NaN equals itself
        return ({k: (s.steps.tobytes(), s.values.tobytes(), s.lines.tobytes()) for k, s in log.series.items()},
                [(e.kind, e.step, e.line) for e in log.events], dict(log.facts))

    for p in files:
        fast = view(read(str(p), "text"))
        with monkeypatch.context() as m:
            m.setattr(text_stdout.TextStdoutReader, "_hf_lags", _full_search_hf_lags)
            full = view(read(str(p), "text"))
        assert fast == full, p
    print(f"{len(files)} HF stdout logs compared")


def test_a_dict_key_first_seen_on_the_provisional_last_line_lands_in_the_log_after_it_completes(tmp_path):
    """The unterminated last line is read provisionally and taken back before the next update, its new series with
    it; the reader's memo of series by key must be taken back too, or later points of that key go to the dropped
    series and the log keeps none of them."""
    from trainlint.readers import open_source

    path = tmp_path / "train.log"
    path.write_text("{'loss': 1.0, 'epoch': 0.1}\n{'loss': 0.9, 'grad_norm': 2.0, 'epoch': 0.2}")
    src = open_source(str(path), "text")
    src.update()
    assert [list(s.values) for s in src.log.series.values() if s.name == "grad_norm"] == [[2.0]]
    with path.open("a") as f:
        f.write("\n{'loss': 0.8, 'grad_norm': 3.0, 'epoch': 0.3}\n")
    src.update()
    assert [list(s.values) for s in src.log.series.values() if s.name == "grad_norm"] == [[2.0, 3.0]]


def test_hf_lag_is_the_search_it_was():
    """`_hf_lag` (the incremental search, its conditions without max() calls: 169k dicts of a 100 MB HF stdout made
    509k) gives every step and leaves every state the full search (`_full_search_hf_lag`) does, over 3,000 runs of
    dicts as HF prints them (4.x rounded floats and 5.x 4-digit strings; 1 to 700 steps per epoch, bars of 5 to 2,000
    steps, a bar lagging 0 to 3 steps, ahead up to 2, an evaluation dict, a resume). Fails with the bar's step left
    out of the quick check, the smallest steps per epoch taken as 2, or a lower search limit."""
    import copy

    from trainlint.core.model import LogFile
    from trainlint.readers.text_stdout import TextStdoutReader, _State

    reader = TextStdoutReader(LogFile(path="x", format="text"))
    for k, bar_total, calls in hf_lag_runs(odd=False):
        st = _State(bar_total=bar_total)
        ref = copy.deepcopy(st)
        for m, bar, is_eval in calls:
            got = reader._hf_lag(st, m, bar, is_eval)
            want = _full_search_hf_lag(None, ref, m, bar, is_eval)
            assert (got, st) == (want, ref), (k, m, bar)


def test_hf_lags_of_a_batch_are_the_search_it_was_across_powers_of_ten():
    """`_hf_lags` over a batch of dicts (the state read and written once; a 5.x epoch's half digit kept for the inside
    of its decade) gives every step and leaves every state the full search gives one dict at a time, over runs whose
    5.x epochs cross powers of ten (some a hair from one, where log10 rounds to it), 4.x ones, evaluation dicts and
    epochs that pin nothing. Fails with the decade's inside taken to its ends, or the kept epochs not cut to 16."""
    import copy
    import math
    import random

    from trainlint.core.model import LogFile
    from trainlint.readers.text_stdout import TextStdoutReader, _State

    reader = TextStdoutReader(LogFile(path="x", format="text"))
    r = random.Random(2808)
    for k in range(400):
        spe, bar_total = r.choice([1, 3, 7, 40, 700]), r.choice([50, 2000])
        start = r.choice([1e-4, 0.09, 0.9, 9.5, 95, 990, 9990]) * spe
        epochs, quoted, steps, evals = [], [], [], []
        step = start
        for _ in range(r.randint(1, 60)):
            step += r.choice([1, 1, 2, 5, 50])
            ep = step / spe
            text, mark = r.choice([(f"{ep:.4g}", True)] * 4 + [(repr(round(ep, 4)), False), ("x", True)])
            if r.random() < 0.1:  # a hair below or above a power of ten, where log10 rounds to the power
                power = 10.0 ** round(math.log10(ep))
                text, mark = repr(r.choice([math.nextafter(power, 0), power, math.nextafter(power, math.inf)])), True
            epochs.append(None if r.random() < 0.03 else text)
            quoted.append(mark)
            steps.append(float(int(step) - r.choice([0, 0, 1, 3])))
            evals.append(r.random() < 0.1)
        st = _State(bar_total=bar_total)
        ref = copy.deepcopy(st)
        got = reader._hf_lags(st, epochs, quoted, steps, evals)
        want = _full_search_hf_lags(None, ref, epochs, quoted, steps, evals)
        assert (got, st) == (want, ref), (k, epochs)


def test_an_hf_dict_with_an_epoch_that_is_not_finite_keeps_the_bars_step(tmp_path):
    """A dict whose `epoch` prints as 'nan' or 'inf' (a run whose dataloader length is not known) has no epoch to
    pin its step: it takes the bar's, as a dict without an epoch does. It made the whole file unreadable (nan:
    ValueError in the steps-per-epoch search) or crashed the check (inf: OverflowError)."""
    for word in ("nan", "inf", "-inf"):
        path = tmp_path / f"{word}.log"
        path.write_text(" 10%|#  | 10/100 [00:01<00:09]\n{'loss': 1.0, 'epoch': 0.1}\n"
                        " 20%|## | 20/100 [00:02<00:08]\n{'loss': 0.9, 'epoch': 0.2}\n"
                        f" 30%|## | 30/100 [00:02<00:08]\n{{'loss': 0.8, 'epoch': '{word}'}}\n")
        log = read(str(path), "text")
        assert not log.problems, word
        (loss,) = [s for s in log.series.values() if s.name == "loss"]
        assert list(loss.values) == [1.0, 0.9, 0.8] and list(loss.steps) == [10.0, 20.0, 30.0], word
        assert list(loss.lines) == [2, 4, 6], word
