"""``trainlint preflight`` on real dataset excerpts (fixtures/datasets, MIT): each rule fires on an injected
fault on its exact line, never on the clean excerpt; tokenizers are trained inside the test (nothing is
downloaded); without the tokenizer library the checks are NOT-CHECKED with exit 2, never FAIL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from rulekit import faithful
from trainlint.core.findings import Level
from trainlint.preflight import preflight

DATA = FIXTURES / "datasets"
TRAIN, TEST, CHAT = DATA / "gsm8k_train_head300.jsonl", DATA / "gsm8k_test_head100.jsonl", \
    DATA / "toy_chat_fine_tuning.jsonl"
CLI = [sys.executable, "-m", "trainlint.cli", "preflight"]


def found(reports, rule: str | None = None) -> list[tuple[str, str, int | None]]:  # type: ignore[no-untyped-def]
    return sorted((Path(f.location.path).name, f.id, f.location.line) for r in reports for f in r.findings
                  if (rule is None or f.id == rule) and f.level != Level.PASS)


def rewrite(src: Path, dst: Path, changes: dict[int, str]) -> Path:
    lines = src.read_text(encoding="utf-8").splitlines()
    for n, text in changes.items():
        lines[n - 1] = text
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dst


def test_the_clean_excerpts_pass():
    clean = preflight([str(TRAIN), str(TEST)])
    assert [r.verdict for r in clean] == [Level.PASS, Level.PASS] and not found(clean)
    dataset = next(m for m in clean[0].measurements if m.check == "dataset").values
    assert dataset == {"lines": 300, "examples": 300, "distinct": 300, "layout": "`question` + `answer`"}


def test_the_real_toy_chat_file_has_a_reply_without_a_question():
    """OpenAI's cookbook toy file ships a record with a system prompt and an assistant turn but no user."""
    [rep] = preflight([str(CHAT)])
    [f] = rep.findings
    assert (f.id, f.location.line, f.location.column, f.location.end_column) == ("TL-PRE-CHAT-TURNS", 4, 2, 166)
    assert f.evidence.text == "line 4: the first turn after the system prompt is `assistant`, not the user (2 turns)"
    faithful(f)


def test_injected_line_faults_each_on_their_line(tmp_path):
    second = TRAIN.read_text().splitlines()[1]
    bad = rewrite(TRAIN, tmp_path / "train.jsonl", {
        5: '{"question": "How many eggs?", "answer": ',
        7: '["a list", "not an example"]',
        9: '{"question": "How many eggs?"}',
        11: '{"question": "How many eggs?", "answer": "   "}',
        13: second.replace(", ", ",   "),                                   # line 2 again, white space aside
    })
    [rep] = preflight([str(bad)])
    assert found([rep]) == [("train.jsonl", "TL-PRE-DUPLICATE", 13), ("train.jsonl", "TL-PRE-EMPTY-TEXT", 11),
                            ("train.jsonl", "TL-PRE-NO-TEXT", 9), ("train.jsonl", "TP-PRE-MALFORMED-JSONL", 5),
                            ("train.jsonl", "TP-PRE-MALFORMED-JSONL", 7)]
    by = {(f.id, f.location.line): f for f in rep.findings}
    assert by[("TP-PRE-MALFORMED-JSONL", 5)].evidence.text == \
        "line 5: not valid JSON (Expecting value) at column 42 (one of 2)"
    assert by[("TP-PRE-MALFORMED-JSONL", 7)].evidence.text == "line 7: valid JSON but list, not an object (one of 2)"
    assert by[("TL-PRE-NO-TEXT", 9)].evidence.text == "line 9: no `answer` field"
    empty = by[("TL-PRE-EMPTY-TEXT", 11)]
    assert (empty.location.column, empty.evidence.text) == (32, "line 11: `answer` is empty or white space")
    dup = by[("TL-PRE-DUPLICATE", 13)]
    assert dup.evidence.text == "line 13 repeats line 2" and dup.related[0].location.line == 2
    assert rep.verdict == Level.FAIL
    for f in rep.findings:
        faithful(f)


def test_an_evaluation_example_copied_into_the_training_file_is_leakage(tmp_path):
    test_lines = TEST.read_text().splitlines()
    leaked = json.loads(test_lines[2])
    train = rewrite(TRAIN, tmp_path / "train.jsonl", {20: json.dumps({"question": leaked["question"] + "  ",
                                                                      "answer": "a different answer"})})
    evals = tmp_path / "test.jsonl"
    evals.write_text(TEST.read_text())
    reps = preflight([str(train), str(evals)])
    assert found(reps) == [("test.jsonl", "TL-PRE-LEAKAGE", 3)]
    f = reps[1].findings[0]
    assert f.evidence.text == "line 3: the prompt is line 20 of the training file (1 of 100 evaluation prompts are)"
    assert (f.related[0].location.path, f.related[0].location.line) == (str(train), 20)
    assert [r.verdict for r in reps] == [Level.PASS, Level.FAIL]


def test_chat_turn_faults(tmp_path):
    good = CHAT.read_text().splitlines()[:3]
    turns = [
        {"role": "user", "content": "I lost my keys."}, {"role": "assistant", "content": "  "},
    ], [
        {"role": "user", "content": "Hi"}, {"role": "user", "content": "Hello?"},
        {"role": "assistant", "content": "Hello!"},
    ], [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join([*good, *(json.dumps({"messages": t}) for t in turns)]) + "\n")
    [rep] = preflight([str(path)])
    assert [(f.location.line, f.evidence.values["problem"]) for f in rep.findings] == [
        (4, "assistant turn 2 is empty"), (5, "two `user` turns in a row (turns 1 and 2)"), (6, "no assistant turn")]
    good_only = tmp_path / "good.jsonl"
    good_only.write_text("\n".join(good) + "\n")
    assert preflight([str(good_only)])[0].verdict == Level.PASS


# -- tokenizers trained here ------------------------------------------------------------------------
def _texts() -> list[str]:
    return [d["question"] + "\n" + d["answer"] for d in map(json.loads, TRAIN.read_text().splitlines())]


@pytest.fixture
def wordpiece(tmp_path):
    tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is not installed")
    tk = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tk.train_from_iterator(_texts(), tokenizers.trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[UNK]", "[PAD]", "</s>"]))
    d = tmp_path / "tok"
    d.mkdir()
    tk.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>", "pad_token": "[PAD]"}))
    return tk, d


def test_token_lengths_eos_and_unknown_tokens_with_a_tokenizer(tmp_path, wordpiece):
    tk, d = wordpiece
    long_q = " ".join(["eggs"] * 1000)
    greek = " ".join(["Πόσα αυγά γεννούν οι πάπιες της Τζάνετ κάθε μέρα;"] * 10)
    data = rewrite(TRAIN, tmp_path / "train.jsonl", {
        8: json.dumps({"question": long_q, "answer": "#### 400"}),
        **{n: json.dumps({"question": greek, "answer": "16"}) for n in range(30, 36)}})
    reps = preflight([str(data)], str(d / "tokenizer.json"), max_len=800)
    ids = {f.id: f for f in reps[0].findings}
    assert found(reps) == [("train.jsonl", "TL-PRE-DUPLICATE", n) for n in range(31, 36)] + [
        ("train.jsonl", "TL-PRE-TOO-LONG", 8), ("train.jsonl", "TP-PRE-NO-EOS-APPEND", 1),
        ("train.jsonl", "TP-TOK-HIGH-OOV", 30)]
    n = len(tk.encode(long_q + "\n#### 400").ids)
    assert ids["TL-PRE-TOO-LONG"].evidence.text == \
        f"line 8: {n} tokens, over --max-len 800 (1 of 300 examples are over) — the longest"
    texts = _texts()
    texts[7] = long_q + "\n#### 400"
    texts[29:35] = [greek + "\n16"] * 6
    unk = sum(tk.encode(t).ids.count(tk.token_to_id("[UNK]")) for t in texts)
    assert ids["TP-TOK-HIGH-OOV"].evidence.values["unknown"] == unk > 0
    assert ids["TP-PRE-NO-EOS-APPEND"].evidence.text == "100 of 100 encoded examples do not end with </s>"
    for f in reps[0].findings:
        faithful(f)
    clean = preflight([str(TRAIN)], str(d / "tokenizer.json"), max_len=4096)
    assert found(clean) == [("gsm8k_train_head300.jsonl", "TP-PRE-NO-EOS-APPEND", 1)]  # the tokenizer's, not the data's


def test_a_tokenizer_that_appends_eos_and_pads_with_it(tmp_path, wordpiece):
    tokenizers = pytest.importorskip("tokenizers")
    tk, d = wordpiece
    tk.post_processor = tokenizers.processors.TemplateProcessing(single="$A </s>", special_tokens=[
        ("</s>", tk.token_to_id("</s>"))])
    tk.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>", "pad_token": "</s>"}))
    reps = preflight([str(TRAIN)], str(d / "tokenizer.json"))
    assert found(reps) == [("gsm8k_train_head300.jsonl", "TL-PRE-PAD-IS-EOS", 1)]
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}))
    assert found(preflight([str(TRAIN)], str(d / "tokenizer.json"))) == [
        ("gsm8k_train_head300.jsonl", "TL-PRE-NO-PAD", 1)]
    (d / "tokenizer_config.json").unlink()
    assert {f.id for f in preflight([str(TRAIN)], str(d / "tokenizer.json"))[0].findings} == {
        "TL-PRE-NO-EOS", "TL-PRE-NO-PAD"}


def test_a_sentencepiece_model_counts_unknown_tokens(tmp_path):
    spm = pytest.importorskip("sentencepiece", reason="the sentencepiece library is not installed")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(_texts()))
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "sp"), vocab_size=800,
                                   pad_id=3, minloglevel=2)
    reps = preflight([str(CHAT)], str(tmp_path / "sp.model"), max_len=256)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    oov = next(f for f in reps[0].findings if f.id == "TP-TOK-HIGH-OOV")
    assert oov.location.line == 5
    assert oov.evidence.values["unknown"] == sum(
        sp.encode("\n".join(f"{t['role']}: {t['content']}" for t in json.loads(ln)["messages"])).count(sp.unk_id())
        for ln in CHAT.read_text().splitlines())
    assert "TP-PRE-NO-EOS-APPEND" not in {f.id for f in reps[0].findings}  # SentencePiece leaves it to the trainer


def test_without_the_tokenizer_library_it_is_not_checked_and_exit_2(tmp_path, wordpiece):
    """A venv without tokenizers (the base interpreter, standard library only): NOT-CHECKED, exit 2, never FAIL.
    trainproof said FAIL with exit 1 when sentencepiece was absent."""
    _tk, d = wordpiece
    base = getattr(sys, "_base_executable", sys.executable)
    venv = tmp_path / "bare"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    python = venv / "bin" / "python"
    assert subprocess.run([python, "-c", "import tokenizers"], env=env, capture_output=True).returncode != 0
    r = subprocess.run([python, "-m", "trainlint.cli", "preflight", str(TRAIN), "--tokenizer",
                        str(d / "tokenizer.json"), "--max-len", "512", "--format", "json"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    [rep] = json.loads(r.stdout)["reports"]
    [f] = rep["findings"]
    assert (f["id"], f["level"], rep["verdict"]) == ("TL-PRE-TOKENIZER-NOT-CHECKED", "NOT-CHECKED", "NOT-CHECKED")
    assert "pip install tokenizers" in f["evidence"]["text"]
    r = subprocess.run([python, "-m", "trainlint.cli", "preflight", str(CHAT), "--tokenizer",
                        str(tmp_path / "missing.model")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "FAIL" not in r.stdout


def test_cli_exit_codes_and_sarif(tmp_path):
    bad = rewrite(TRAIN, tmp_path / "train.jsonl", {5: "not json"})
    assert subprocess.run([*CLI, str(TRAIN)], capture_output=True, timeout=120).returncode == 0
    assert subprocess.run([*CLI, str(CHAT)], capture_output=True, timeout=120).returncode == 0  # WARN
    r = subprocess.run([*CLI, str(bad), "--format", "sarif"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    [result] = json.loads(r.stdout)["runs"][0]["results"]
    assert result["ruleId"] == "TP-PRE-MALFORMED-JSONL"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 5


async def test_the_server_shows_dataset_findings_live_while_the_file_is_regenerated(tmp_path):
    """A data/ folder's JSONL of examples is linted by the server (not judged as a log): findings on the
    examples' lines, updated when the file is rewritten; a `datasets:` glob names one anywhere."""
    import asyncio

    from test_lsp import until
    from test_lsp_robust import start, stop

    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "sft").mkdir()
    train = ws / "data" / "train.jsonl"
    train.write_text(TRAIN.read_text())
    chat = ws / "sft" / "chat.jsonl"
    chat.write_text(CHAT.read_text())
    (ws / ".trainlint.yaml").write_text("datasets: [sft/*.jsonl]\n")
    client = await start(ws)
    try:
        await until(lambda: train.as_uri() in client.diagnostics, what="the dataset linted")
        assert not client.diagnostics[train.as_uri()]
        await until(lambda: client.diagnostics.get(chat.as_uri()), what="the configured dataset linted")
        [d] = client.diagnostics[chat.as_uri()]
        assert (str(d.code), d.range.start.line, d.range.start.character) == ("TL-PRE-CHAT-TURNS", 3, 1)
        rewrite(TRAIN, train, {5: "not json", 13: TRAIN.read_text().splitlines()[1]})
        await until(lambda: len(client.diagnostics.get(train.as_uri(), [])) == 2, what="the rewrite linted")
        got = sorted((str(d.code), d.range.start.line) for d in client.diagnostics[train.as_uri()])
        assert got == [("TL-PRE-DUPLICATE", 12), ("TP-PRE-MALFORMED-JSONL", 4)]
        train.write_text(TRAIN.read_text())                                # regenerated clean
        await until(lambda: not client.diagnostics.get(train.as_uri(), [1]), what="cleared")
        await asyncio.sleep(0)
    finally:
        await stop(client)


def test_a_file_without_any_example_is_not_checked_and_check_leaves_datasets_to_preflight(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n[1]\n\"text\"\n")
    [rep] = preflight([str(junk)])
    assert rep.verdict == Level.FAIL  # the malformed lines are the finding; nothing else could be judged
    [none] = [f for f in rep.findings if f.id == "TL-PRE-NO-EXAMPLES"]
    assert none.evidence.text == "3 non-blank lines, no example"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text(TRAIN.read_text())
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(tmp_path / "data" / "train.jsonl")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "run `trainlint preflight` on it" in r.stdout
