"""Every reader pattern stays linear on hostile lines (issue 14, items 10–12).

Each real line shape below is amplified at every boundary between character classes: the character
there, or a blank, repeated 100,000 times. A pattern with overlapping runs (``[ \\t]*`` next to
``[ \\t]*``) or nested alternatives tries every split of such a run: a 60,000-blank Coqui line took
31 s. Each case is read, detected and located under an alarm that only a super-linear pattern can
reach.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainlint.readers import detect, read

N = 100_000
BUDGET_S = 5  # per case: linear work on 100 KB is milliseconds, a quadratic pattern tens of seconds

SHAPES: dict[str, list[str]] = {
    "text": [
        "{'loss': '2.775', 'grad_norm': '0.5345', 'learning_rate': '0.24', 'epoch': '0.3906'}",
        "{'loss': 2.775, 'grad_norm': 0.5345, 'learning_rate': 0.24, 'epoch': 0.39}",
        "iter 100: loss 2.3451, time 12.31ms, mfu 3.20%",
        "step 500: train loss 2.1000, val loss 2.2000",
        "step 12/400 | train loss 4.238921 | norm 1.2 | lr 6.00e-04 | (12.3 ms | 41000 tok/s)",
        "val loss 4.1",
        "Epoch 3/12:  40%|████ | 13/32 [00:01<00:02, 12.3it/s, loss=1.3758, lr=5.32e-03]",
        "Epoch 3/12 - train loss: 0.41 - val loss: 0.52",
        "Epoch 3/12",
        "32/32 ━━━━ 0s 2ms/step - loss: 0.4107 - val_loss: 0.5203",
        " [2024-01-01 00:00:00] iteration      100/    1000 | consumed samples: 100 | lm loss: 2.31E+00 |"
        " loss scale: 65536.0 | grad norm: 1.2 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        "Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:00  time: 0.5  loss: 0.5123",
        "Epoch [3/12], Step [10/100], Loss: 0.4107",
        "250 train 3.2846",
        "step: 10, loss: 0.5, lr: 0.001",
        "Iter 300 | train loss 2.25 | val loss 2.5 | lr 1.0e-04",
        "3|84|Loss: 0.6489648818969727:  10%|█         | 4/40 [00:00<00:00, 178.16it/s]",
        "[Rank 0] [2024-01-01 00:00:00,000] [INFO] [loss_scaler.py:183:update_scale] OVERFLOW! Skipping step.",
    ],
    # the general text reader (issue 24): tables, boxes, counted key-value runs, prefixes
    "general": [
        "epoch     train_loss  valid_loss  accuracy  time    ",
        "0         0.693147    0.690000    0.520000  00:01     ",
        "      1        \x1b[36m0.6931\x1b[0m        0.5000        \x1b[35m0.6930\x1b[0m  0.0200",
        "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
        "|    ep_rew_mean     | 22.4 |",
        "| epoch | loss | acc |",
        "[10]\ttrain-logloss:0.48242\tvalid-logloss:0.52671",
        "[5]\ttraining's binary_logloss: 0.549\tvalid_1's binary_logloss: 0.652",
        "[LightGBM] [Info] Number of positive: 500, number of negative: 500",
        "Epoch[3/10] Iteration[230/1000] Loss: 1.29",
        "Validation Results - Epoch: 3  Avg accuracy: 0.91 Avg loss: 0.28",
        "[rank1]: step 12/400 | train loss 4.238921 | norm 1.2 | lr 6.00e-04",
        "2024-05-01 12:00:00,123 - trainer - INFO - step 10 loss 0.5 acc 0.7",
        "I0501 12:00:00.123456 12345 train.py:88] step 3 loss=0.5",
        "16/16 - 1s - 3ms/step - loss: 1.2928 - val_loss: 1.31",
        "[1,000] LogLoss: 0.4517447714934441",
        "12:\tlearn: 0.3877198\ttest: 0.6449215\tbest: 0.6449215 (1)\ttotal: 58.5ms\tremaining: 2.28s",
    ],
    "coqui": [
        " --> TIME: 2024-01-01 00:00:00 -- STEP: 0/10 -- GLOBAL_STEP: 1",
        "     | > loss: 0.61357  (0.61357)",
        "     | > loss: 1",
        "     | > current_lr: 0.00010 ",
        "\x1b[1m   > EPOCH: 0/10\x1b[0m",
        " > CHECKPOINT : /tmp/run/checkpoint_1.pth",
    ],
    "csv": ["step,loss,lr,note", '1,0.5,0.001,"a, b"', "2,,0.001,"],
    "jsonl": ['{"step": 1, "loss": 0.5, "lr": 0.001}', '{"iteration": 2, "total_loss": 0.4, "data_time": 0.01}'],
}
HEADS = {"text": "step 1: loss 2.0\n", "general": "epoch  loss  acc\n1  0.5  0.7\n",
         "coqui": " --> STEP: 0/10 -- GLOBAL_STEP: 0\n     | > loss: 1.0  (1.0)\n",
         "csv": "step,loss,lr,note\n1,0.5,0.001,x\n", "jsonl": '{"step": 0, "loss": 1.0}\n'}


def _class(ch: str) -> str:
    return "blank" if ch in " \t" else "digit" if ch.isdigit() else "word" if ch.isalpha() else ch


def amplified(line: str) -> Iterator[str]:
    for i, ch in enumerate(line):
        if i == 0 or _class(ch) != _class(line[i - 1]):
            yield line[:i] + ch * N + line[i:]
            yield line[:i] + " " * N + line[i:]
    yield line + " " * N + "x"


def _alarm(signum, frame):
    raise TimeoutError(f"reading one amplified line took over {BUDGET_S} s: a pattern is super-linear")


@pytest.mark.parametrize("fmt", sorted(SHAPES))
def test_reader_patterns_are_linear_on_amplified_lines(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / ("trainer_0_log.txt" if fmt == "coqui" else f"train.{fmt}")
    cases = [HEADS[fmt] + hostile + "\n" for line in SHAPES[fmt] for hostile in amplified(line)]
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for text in cases:
            path.write_text(text, encoding="utf-8")
            signal.alarm(BUDGET_S)
            detect(str(path))
            log = read(str(path), fmt)
            hostile = text.splitlines()[-1]
            for s in log.series.values():
                if s.locator is not None:
                    s.locator.span(hostile)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert len(cases) > 40


def test_csv_rows_with_line_breaks_in_quoted_cells(tmp_path: Path) -> None:
    """Findings land on the physical line of the cell (rows were counted: 30 lines early), and the cell
    locator fails at once on a line it does not fit (2^cells tries: 81 s at 28 cells)."""
    from trainlint.judge import judge_path
    from trainlint.readers.csv_log import cell_locator

    rows = ["step,loss,note"] + [f'{i},1.0,"first\nsecond"' for i in range(30)] + ['30,nan,"x"']
    path = tmp_path / "metrics.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    nan = [f for f in judge_path(str(path)).findings if f.id == "TP-NAN"]
    assert [(f.location.line, f.location.column, f.location.end_column) for f in nan] == [(62, 4, 7)]
    log = read(str(path))
    (loss,) = [s for s in log.series.values() if s.name == "loss"]
    assert list(loss.lines[:3]) == [2, 4, 6]

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(BUDGET_S)
    try:
        assert cell_locator(30).span('"a",' * 28 + '"b') is None
        assert cell_locator(2).span('1,"a ""q"", b",0.5') == (15, 18)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_jsonl_with_a_new_key_on_each_line_is_read_in_linear_time(tmp_path: Path) -> None:
    """Columns cost keys x lines per batch: 4.3 MB with a new key on each line took 296 s."""
    path = tmp_path / "metrics.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(100_000):
            f.write(f'{{"step": {i}, "loss": {1 + (i % 7) / 10}, "key_{i}": 0.5}}\n')
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(30)  # about 2 s now; over a minute with columns
    try:
        log = read(str(path))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert len(log.series) == 100_001
    (loss,) = [s for s in log.series.values() if s.name == "loss"]
    assert (len(loss), loss.lines[-1], loss.values[-1]) == (100_000, 100_000, 1.4)
