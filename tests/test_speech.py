"""``trainlint preflight`` on speech/TTS corpora made in the test (WAV written with ``wave``: tones, silence,
clipping, other rates, stereo; manifests with real faults): each rule fires on its line with its exact evidence,
does not fire on the clean corpus, and is skipped (NOT-CHECKED, never FAIL) where it cannot be measured."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from conftest import ROOT
from rulekit import faithful
from speechkit import write_wav
from trainlint.core.findings import Level
from trainlint.preflight import exit_code, preflight
from trainlint.readers.speech import layout_of

TEXTS = ["The quick brown fox jumps over the lazy dog.", "She sells sea shells by the sea shore today.",
         "A journey of a thousand miles begins with one step.", "All that glitters is not gold, they say often.",
         "Birds of a feather flock together in the spring.", "Actions speak louder than words in every case.",
         "Fortune favours the bold and the brave at heart.", "Time and tide wait for no man nor any woman.",
         "Every cloud has a silver lining somewhere up high.", "Practice makes perfect when you keep at it long."]


def clean_rows(d: Path) -> list[dict]:
    rows = []
    for i, t in enumerate(TEXTS):
        write_wav(d / "wavs" / f"a{i}.wav", seconds=2.5 + 0.1 * i, freq=200 + 10 * i)
        rows.append({"audio_filepath": f"wavs/a{i}.wav", "duration": round(2.5 + 0.1 * i, 2), "text": t})
    return rows


def manifest(d: Path, rows: list, name: str = "manifest.jsonl", extra: str = "") -> Path:
    p = d / name
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + extra, encoding="utf-8")
    return p


def hits(rep) -> list[tuple[str, int | None, str]]:  # type: ignore[no-untyped-def]
    return [(f.id, f.location.line, f.evidence.text) for f in rep.findings]


def test_the_clean_corpus_passes(tmp_path):
    rep, = preflight([str(manifest(tmp_path, clean_rows(tmp_path)))])
    assert rep.format == "speech" and rep.verdict == Level.PASS, hits(rep)
    assert rep.measurements[0].values["audio_read"] == 10


@pytest.fixture
def faulty(tmp_path) -> Path:
    d = tmp_path
    rows = clean_rows(d)
    write_wav(d / "wavs" / "b0.wav", seconds=2.5, rate=22050)
    rows.append({"audio_filepath": "wavs/b0.wav", "text": "Paid $5 on 12/03/2024 for the ticket home."})
    write_wav(d / "wavs" / "b1.wav", seconds=2.6, channels=2)
    rows.append({"audio_filepath": "wavs/b1.wav", "text": "Hello мир, the world is wide and long."})
    write_wav(d / "wavs" / "b2.wav", seconds=0.3)
    rows.append({"audio_filepath": "wavs/b2.wav", "text": "Hi."})
    write_wav(d / "wavs" / "b3.wav", seconds=6.0, silence=(1.0, 3.0))
    rows.append({"audio_filepath": "wavs/b3.wav", "text": "A long pause inside this clip is here."})
    write_wav(d / "wavs" / "b4.wav", seconds=2.5, clip=True)
    rows.append({"audio_filepath": "wavs/b4.wav", "text": "This one is far too loud for comfort now."})
    rows.append({"audio_filepath": "wavs/missing.wav", "text": "Nobody recorded this line at all ever."})
    shutil.copy(d / "wavs" / "a0.wav", d / "wavs" / "copy.wav")
    rows.append({"audio_filepath": "wavs/copy.wav", "text": "The quick brown fox jumps over the lazy dog."})
    (d / "wavs" / "empty.wav").write_bytes(b"")
    rows.append({"audio_filepath": "wavs/empty.wav", "text": "Empty file here for you to find now."})
    write_wav(d / "wavs" / "c0.wav", seconds=2.5)
    rows.append({"audio_filepath": "wavs/c0.wav", "text": ""})
    write_wav(d / "wavs" / "c1.wav", seconds=1.0)
    rows.append({"audio_filepath": "wavs/c1.wav", "text": "This transcript is much too long for a clip of one "
                 "second, surely it belongs to some other recording entirely."})
    write_wav(d / "wavs" / "c2.wav", seconds=30.0, rate=8000)
    rows.append({"audio_filepath": "wavs/c2.wav", "text": "x" * 500})
    return manifest(d, rows, extra="not json\n")


def test_each_fault_on_its_line_with_its_evidence(faulty):
    rep, = preflight([str(faulty)])
    got = hits(rep)
    dist = "durations min 0.3 s / median 2.7 s / max 30 s"
    assert ("TP-DATA-INCONSISTENT-SR", 11, "line 11: 22050 Hz, the corpus is 16000 Hz (17 of 19 files: 16000 Hz × "
            "17, 22050 Hz × 1, 8000 Hz × 1) (one of 2)") in got
    assert ("TP-DATA-INCONSISTENT-SR", 21, "line 21: 8000 Hz, the corpus is 16000 Hz (17 of 19 files: 16000 Hz × "
            "17, 22050 Hz × 1, 8000 Hz × 1) (one of 2)") in got
    assert ("TP-DATA-UNNORMALIZED", 11, "line 11: a date `12/03/2024` in the transcript") in got
    assert ("TP-DATA-INCONSISTENT-CHANNELS", 12, "line 12: 2 channels, the corpus is 1 channels (18 of 19 files: "
            "1 channels × 18, 2 channels × 1)") in got
    assert ("TP-DATA-MIXED-SCRIPTS", 12, "line 12: letters of Latin 26, Cyrillic 3; the first Cyrillic one is "
            "`м`") in got
    assert ("TP-DATA-DURATION-SHORT", 13, f"line 13: 0.3 s, under 0.5 s (1 of 19 files; {dist})") in got
    assert ("TP-DATA-DURATION-LONG", 21, f"line 21: 30 s, over 25 s (1 of 19 files; {dist})") in got
    assert ("TP-DATA-SILENCE", 14, "line 14: `wavs/b3.wav` is silent for 3 s from 1 s (every sample at or under 0.005 "
            "of full scale; limit 2 s)") in got
    assert ("TP-DATA-CLIPPING", 15, "line 15: `wavs/b4.wav` peaks at 1 of full scale (21700 samples at or over 0.99 "
            "in the first 2.5 s)") in got
    assert any(i == "TP-DATA-MISSING-AUDIO" and ln == 16 and t.startswith("line 16: `wavs/missing.wav` does not exist "
                                                                          "(looked for ") for i, ln, t in got)
    assert ("TP-DATA-DUPLICATES", 17, "line 17: `wavs/copy.wav` is byte-identical to the audio of line 1 (80044 bytes; "
            "byte-identical, not perceptual)") in got
    assert ("TP-DATA-UNREADABLE-AUDIO", 18, "line 18: `wavs/empty.wav` (0 bytes): the file is empty (0 bytes)") in got
    assert ("TP-DATA-EMPTY-TRANSCRIPT", 19, "line 19: the transcript (`text`) is empty") in got
    rate = [t for i, ln, t in got if i == "TP-DATA-CHAR-RATE-OUTLIER"]
    assert [ln for i, ln, _ in got if i == "TP-DATA-CHAR-RATE-OUTLIER"] == [20], got
    assert rate[0].startswith("line 20: 110 chars/s, 6.7x above the corpus median 16.4 chars/s (limit 3x; 1 of 18 "
                              "records are out; min 6.33 / max 110 chars/s) — the worst")
    assert ("TL-DATA-BAD-RECORD", 22, "line 22: not JSON (Expecting value) at column 1") in got
    # the minority is named, the majority is related information
    sr = next(f for f in rep.findings if f.id == "TP-DATA-INCONSISTENT-SR")
    assert [(r.role, r.location.line) for r in sr.related] == [("majority", 1)]
    dup = next(f for f in rep.findings if f.id == "TP-DATA-DUPLICATES")
    assert [(r.role, r.location.line) for r in dup.related] == [("first-occurrence", 1)]
    # the column is the field's: the audio path, the date inside the transcript
    raw = faulty.read_text(encoding="utf-8").splitlines()
    f = next(f for f in rep.findings if f.id == "TP-DATA-UNNORMALIZED")
    assert raw[10][f.location.column - 1:f.location.end_column - 1] == "12/03/2024"
    f = next(f for f in rep.findings if f.id == "TP-DATA-MISSING-AUDIO")
    assert raw[15][f.location.column - 1:f.location.end_column - 1] == '"audio_filepath": "wavs/missing.wav"'
    assert rep.verdict == Level.FAIL and exit_code([rep]) == 1
    for f in rep.findings:
        faithful(f)


def test_relative_paths_are_the_manifests_not_the_working_directorys(tmp_path, monkeypatch):
    p = manifest(tmp_path, clean_rows(tmp_path))
    monkeypatch.chdir("/")
    rep, = preflight([str(p)])
    assert rep.verdict == Level.PASS, hits(rep)


def test_ljspeech_metadata_reads_the_normalized_column(tmp_path):
    lines = []
    for i, t in enumerate(TEXTS):
        write_wav(tmp_path / "wavs" / f"LJ001-{i:04d}.wav", seconds=2.6, rate=22050, freq=200 + 10 * i)
        lines.append(f"LJ001-{i:04d}|{t} In 1820.|{t} In eighteen twenty.")
    lines.append("LJ001-0010|Printing in 1455|Printing in 1455")
    write_wav(tmp_path / "wavs" / "LJ001-0010.wav", seconds=0.8, rate=22050, freq=330)
    (tmp_path / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lay = layout_of(str(tmp_path / "metadata.csv"))
    assert lay is not None and (lay.kind, lay.text) == ("ljspeech", "normalized")
    rep, = preflight([str(tmp_path / "metadata.csv")])
    assert hits(rep) == [("TP-DATA-UNNORMALIZED", 11, "line 11: digits `1455` in the transcript")]
    f = rep.findings[0]
    assert (f.location.column, f.location.end_column) == (41, 45)  # the normalized column's digits, not the raw one


def test_audiofolder_metadata(tmp_path):
    write_wav(tmp_path / "a.wav", seconds=1.0)
    write_wav(tmp_path / "b.wav", seconds=1.0, rate=44100)
    (tmp_path / "metadata.csv").write_text('file_name,transcription\na.wav,"Hello there, world."\n'
                                           'b.wav,"Good bye, world."\nc.wav,Nothing\n', encoding="utf-8")
    rep, = preflight([str(tmp_path / "metadata.csv")])
    assert [(i, ln) for i, ln, _ in hits(rep)] == [("TP-DATA-INCONSISTENT-SR", 2), ("TP-DATA-INCONSISTENT-SR", 3),
                                                    ("TP-DATA-MISSING-AUDIO", 4)] or \
        [(i, ln) for i, ln, _ in hits(rep)] == [("TP-DATA-INCONSISTENT-SR", 3), ("TP-DATA-MISSING-AUDIO", 4)]


def _flac_rows(tmp_path: Path, real: bool) -> Path:
    rows = []
    (tmp_path / "clips").mkdir(exist_ok=True)
    for i, t in enumerate(TEXTS):
        p = tmp_path / "clips" / f"{i}.flac"
        if real:
            import soundfile as sf

            wav = write_wav(tmp_path / "tmp.wav", seconds=2.5 + 0.1 * i, freq=200 + 10 * i, clip=i == 4)
            data, rate = sf.read(str(wav), dtype="int16")
            sf.write(str(p), data, rate, format="FLAC")
        else:
            p.write_bytes(b"fLaC" + bytes(64))
        rows.append({"path": f"clips/{i}.flac", "sentence": t})
    return manifest(tmp_path, rows)


def test_flac_through_soundfile(tmp_path):
    pytest.importorskip("soundfile", reason="soundfile is not installed")
    rep, = preflight([str(_flac_rows(tmp_path, real=True))])
    assert rep.measurements[0].values["audio_read"] == 10
    assert hits(rep) == [("TP-DATA-CLIPPING", 5, "line 5: `clips/4.flac` peaks at 1 of full scale (25520 samples at or "
                                                 "over 0.99 in the first 2.9 s)")]


def test_flac_without_soundfile_is_not_checked_with_the_install_command(tmp_path):
    """A venv without soundfile (the base interpreter, standard library only): NOT-CHECKED, exit 2, never FAIL
    (trainproof's `data` stops with "internal error" without its speech extra)."""
    m = _flac_rows(tmp_path, real=False)
    base = getattr(sys, "_base_executable", sys.executable)
    venv = tmp_path / "bare"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    python = venv / "bin" / "python"
    assert subprocess.run([python, "-c", "import soundfile"], env=env, capture_output=True).returncode != 0
    r = subprocess.run([python, "-m", "trainlint.cli", "preflight", str(m), "--format", "json"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    [rep] = json.loads(r.stdout)["reports"]
    assert rep["verdict"] == "NOT-CHECKED"
    assert [(f["id"], f["evidence"]["text"]) for f in rep["findings"]] == [
        ("TL-DATA-AUDIO-NOT-CHECKED", "10 of 10 audio files (the first on line 1) are not WAV: reading them needs "
                                      "soundfile: pip install soundfile (or pip install 'trainlint[speech]')")]


def test_a_header_that_declares_hours_is_not_read_whole(tmp_path):
    p = tmp_path / "wavs" / "liar.wav"
    write_wav(p, seconds=1.0)
    raw = bytearray(p.read_bytes())
    raw[40:44] = (16000 * 2 * 3600 * 5).to_bytes(4, "little")  # the data chunk says five hours
    p.write_bytes(bytes(raw))
    long = tmp_path / "wavs" / "long.wav"  # 90 s of real audio: decoded for at most 60 s
    with wave.open(str(long), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * (8000 * 90))
    rows = [{"audio_filepath": "wavs/liar.wav", "text": "A header that lies."},
            {"audio_filepath": "wavs/long.wav", "text": "Ninety seconds of nothing."}]
    rep, = preflight([str(manifest(tmp_path, rows))])
    got = hits(rep)
    assert ("TP-DATA-UNREADABLE-AUDIO", 1, "line 1: `wavs/liar.wav` (32044 bytes): cut short: the header declares "
            "18000 s, the file holds 1 s") in got
    for f in rep.findings:
        faithful(f)
    assert ("TP-DATA-SILENCE", 2, "line 2: `wavs/long.wav` is silent for 60 s from 0 s (every sample at or under 0.005 "
            "of full scale; limit 2 s)") in got  # 60 s decoded of 90
    assert any(i == "TP-DATA-DURATION-LONG" and t.startswith("line 2: 90 s, over 25 s") for i, _, t in got)


def test_not_a_speech_manifest_stays_a_text_dataset(tmp_path):
    p = tmp_path / "train.jsonl"
    p.write_text('{"text": "hello"}\n', encoding="utf-8")
    assert layout_of(str(p)) is None
    assert preflight([str(p)])[0].format == "dataset"


def test_cli_json_and_sarif(faulty):
    out = subprocess.run([sys.executable, "-m", "trainlint.cli", "preflight", str(faulty), "--format", "sarif"],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    lines = sorted({r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in doc["runs"][0]["results"]})
    assert lines == list(range(11, 23))
    out = subprocess.run([sys.executable, "-m", "trainlint.cli", "preflight", str(faulty), "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and json.loads(out.stdout)


# -- transcripts against a SentencePiece model trained here -----------------------------------------
def _spm(tmp_path: Path, texts: list[str], **kw) -> str:  # type: ignore[no-untyped-def]
    spm = pytest.importorskip("sentencepiece", reason="the sentencepiece library is not installed")
    corpus = tmp_path / "tok.txt"
    corpus.write_text("\n".join(texts * 3), encoding="utf-8")
    prefix = tmp_path / kw.pop("name", "sp")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=kw.pop("vocab", 150),
                                   hard_vocab_limit=False, character_coverage=1.0, minloglevel=2, **kw)
    return str(prefix) + ".model"


def tok_hits(rep) -> list[tuple[str, int | None, str]]:  # type: ignore[no-untyped-def]
    return [h for h in hits(rep) if h[0].startswith(("TP-TOK", "TL-TOK", "TL-PRE-TOK"))]


def test_a_tokenizer_trained_on_the_transcripts_passes(tmp_path):
    model = _spm(tmp_path, TEXTS)
    rep, = preflight([str(manifest(tmp_path, clean_rows(tmp_path)))], model)
    assert rep.verdict == Level.PASS and tok_hits(rep) == []
    tokens = rep.measurements[1].values
    assert tokens["transcripts"] == 10 and tokens["timed"] == 10


def test_uncovered_characters_and_unknown_tokens_on_the_worst_line(tmp_path):
    model = _spm(tmp_path, TEXTS)
    rows = clean_rows(tmp_path)
    write_wav(tmp_path / "wavs" / "de.wav", seconds=2.5, freq=420)
    rows.append({"audio_filepath": "wavs/de.wav", "text": "Grüße aus der Straße, über alles."})
    rep, = preflight([str(manifest(tmp_path, rows))], model)
    got = tok_hits(rep)
    cov = [h for h in got if h[0] == "TL-TOK-CHAR-COVERAGE"]
    assert cov == [("TL-TOK-CHAR-COVERAGE", 11, "98.8% of the transcripts' characters are covered (under 99.9%): 3 "
                    "of 38 distinct characters are not (`ü` × 2, `ß` × 2, `G` × 1); `ü` first on line 11")], got
    oov = [h for h in got if h[0] == "TP-TOK-HIGH-OOV"]
    assert [h[1] for h in oov] == [11] and "line 11 has 4 of" in oov[0][2]
    for f in rep.findings:
        faithful(f)


def test_a_character_level_tokenizer_splits_words_and_blows_up_tokens_per_second(tmp_path):
    model = _spm(tmp_path, TEXTS, model_type="char", name="char")
    rows = []
    for i, t in enumerate(TEXTS):  # 44-51 characters in 0.8 s
        write_wav(tmp_path / "wavs" / f"f{i}.wav", seconds=0.8, freq=200 + 10 * i)
        rows.append({"audio_filepath": f"wavs/f{i}.wav", "text": t})
    rep, = preflight([str(manifest(tmp_path, rows))], model)
    got = {h[0]: h for h in tok_hits(rep)}
    assert got["TL-TOK-CHAR-SPLIT"] == ("TL-TOK-CHAR-SPLIT", 6, "53 of 53 words of 4+ letters (100%, over 10%) are "
                                        "split into single characters; line 6 has 7, e.g. `Actions`")
    assert got["TP-TOK-HIGH-TPS"] == ("TP-TOK-HIGH-TPS", 3, "59.9 tokens/s over 50 (479 tokens in 8 s of 10 of 10 "
                                      "transcripts); line 3 has 52 tokens in 0.8 s (65/s)")
    for f in rep.findings:
        faithful(f)


def test_tokens_per_second_is_not_checked_without_durations(tmp_path):
    model = _spm(tmp_path, TEXTS)
    (tmp_path / "wavs").mkdir()
    rows = []
    for i, t in enumerate(TEXTS):  # audio that cannot be decoded, and no `duration` in the manifest
        (tmp_path / "wavs" / f"{i}.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
        rows.append({"audio_filepath": f"wavs/{i}.wav", "text": t})
    rep, = preflight([str(manifest(tmp_path, rows))], model)
    assert ("TP-TOK-TPS-NOT-MEASURED", None, "0 of 10 transcripts have a duration") in tok_hits(rep)
    assert {f.id for f in rep.findings} == {"TP-TOK-TPS-NOT-MEASURED", "TP-DATA-UNREADABLE-AUDIO"}


def test_the_rate_rule_is_skipped_below_ten_records_and_check_leaves_manifests_to_preflight(tmp_path):
    rows = clean_rows(tmp_path)[:9]
    write_wav(tmp_path / "wavs" / "x.wav", seconds=1.0, freq=500)
    rows.append({"audio_filepath": "wavs/x.wav", "text": "A"})  # 1 char/s against about 17: far out
    rep, = preflight([str(manifest(tmp_path, rows))])
    assert [h[:2] for h in hits(rep)] == [("TP-DATA-CHAR-RATE-OUTLIER", 10)]  # 10 records: judged
    rows.pop(0)
    rep, = preflight([str(manifest(tmp_path, rows))])
    assert hits(rep) == []  # 9 records: not judged (trainproof's minimum of 10)
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "check", str(tmp_path / "manifest.jsonl")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "run `trainlint preflight` on it" in r.stdout, r.stdout


def test_scripts_written_together_are_one():
    from trainlint.rules.speech_checks import scripts

    assert list(scripts("東京のラーメンはとてもおいしいです。")) == ["CJK"]
    assert list(scripts("ＡＢＣ and abc")) == ["LATIN"]           # fullwidth Latin is Latin
    assert list(scripts("Hawaiʻi")) == ["LATIN"]                   # a modifier letter is no script
    assert scripts("Hello мир") == {"LATIN": (5, 0), "CYRILLIC": (3, 6)}


def test_tokens_per_second_counts_only_the_timed_records(tmp_path):
    """trainproof 0.19's fix, kept: one record in ten with a duration must not put every record's tokens over that
    one record's seconds."""
    model = _spm(tmp_path, TEXTS)
    (tmp_path / "wavs").mkdir()
    rows = []
    for i, t in enumerate(TEXTS):
        (tmp_path / "wavs" / f"{i}.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")  # not decodable: no duration
        rows.append({"audio_filepath": f"wavs/{i}.wav", "text": t, **({"duration": 3.0} if i == 0 else {})})
    rep, = preflight([str(manifest(tmp_path, rows))], model)
    assert "TP-TOK-HIGH-TPS" not in {f.id for f in rep.findings}
    m = rep.measurements[1].values
    assert m["timed"] == 1 and m["tokens_per_s"] < 50


def test_thresholds_come_from_the_nearest_configuration(faulty):
    (faulty.parent / ".trainlint.yaml").write_text("thresholds:\n  speech_max_duration_s: 40\n")
    out = subprocess.run([sys.executable, "-m", "trainlint.cli", "preflight", str(faulty), "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    ids = [(f["id"], f["location"]["line"]) for r in json.loads(out.stdout)["reports"] for f in r["findings"]]
    assert ("TP-DATA-DURATION-LONG", 21) not in ids and ("TP-DATA-DURATION-SHORT", 13) in ids
