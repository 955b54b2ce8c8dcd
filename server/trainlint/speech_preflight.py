"""``trainlint preflight`` on a speech/TTS corpus (a manifest recognised by its layout), and ``--tokenizer`` on
its transcripts: each finding on its manifest line.

:func:`speech_report` is what :func:`trainlint.preflight.preflight` calls for a file whose layout is a speech
manifest (LJSpeech/Coqui ``metadata.csv``, an audiofolder ``metadata.csv``, a NeMo-style JSON-lines manifest).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from .core.findings import Evidence, Finding, Measurement, Ratio
from .core.model import Location
from .core.report import Report
from .dataset_report import dataset_verdict, line_ends, tokenizer_not_checked
from .readers.speech import SpeechLayout, records
from .rules.dataset import TL_PRE_NO_EXAMPLES
from .rules.dataset_checks import oov_finding
from .rules.speech import TL_TOK_CHAR_COVERAGE, TL_TOK_CHAR_SPLIT, TP_TOK_HIGH_TPS, TP_TOK_TPS_NOT_MEASURED
from .rules.speech_checks import SpeechCheck
from .rules.thresholds import Thresholds

_WORD = re.compile(r"[^\W\d_]{4,}")
MAX_WORDS_CACHED = 200_000  # distinct words whose split is remembered (a speech corpus has tens of thousands)


class TranscriptTokens:
    """The tokenizer against the transcripts, accumulated as records stream by."""

    def __init__(self, tok: Any, th: Thresholds) -> None:
        self.tok, self.th = tok, th
        self.tokens = self.unknown = self.scored = 0
        self.worst_unk: tuple[int, int, int] | None = None
        self.timed = self.timed_tokens = 0
        self.timed_s = 0.0
        self.worst_tps: tuple[float, int, int, float] | None = None  # (tokens/s, line, tokens, seconds)
        self.chars: Counter[str] = Counter()
        self.first_line: dict[str, int] = {}
        self.words = self.split_words = 0
        self.split_lines: Counter[int] = Counter()
        self.split_example: dict[int, str] = {}
        self._split: dict[str, bool] = {}

    def __call__(self, line: int, text: str, duration: float | None) -> None:
        tok = self.tok
        ids = tok.encode(text)
        n = len(ids)
        self.scored += 1
        self.tokens += n
        if tok.unk is not None:
            u = ids.count(tok.unk)
            self.unknown += u
            if u and (self.worst_unk is None or u > self.worst_unk[1]):
                self.worst_unk = (line, u, n)
        if duration is not None and duration > 0:
            self.timed += 1
            self.timed_tokens += n
            self.timed_s += duration
            r = n / duration
            if self.worst_tps is None or r > self.worst_tps[0]:
                self.worst_tps = (r, line, n, duration)
        stripped = "".join(text.split())
        self.chars.update(stripped)
        for c in set(stripped).difference(self.first_line):
            self.first_line[c] = line
        for w in _WORD.findall(text):
            self.words += 1
            split = self._split.get(w)
            if split is None:
                pieces = [tok.piece(i) for i in tok.encode(w)]
                split = sum(1 for p in pieces if p not in ("▁", "")) >= len(w)
                if len(self._split) < MAX_WORDS_CACHED:
                    self._split[w] = split
            if split:
                self.split_words += 1
                self.split_lines[line] += 1
                self.split_example.setdefault(line, w)

    def findings(self, path: str) -> list[Finding]:
        out: list[Finding] = []
        th, tok = self.th, self.tok
        unk = tok.piece(tok.unk) if tok.unk is not None else "unk"
        f = oov_finding(path, self.unknown, self.tokens, self.worst_unk, unk)
        if f is not None:
            out.append(f)
        if tok.unk is not None and self.chars:
            total = sum(self.chars.values())
            bad = {c: n for c, n in self.chars.items() if tok.unk in tok.encode(c)}
            covered = 1 - sum(bad.values()) / total
            if bad and covered < th.min_char_coverage:
                worst = max(bad, key=lambda c: (bad[c], -self.first_line[c]))
                line = self.first_line[worst]
                listed = ", ".join(f"`{c}` × {n}" for c, n in sorted(bad.items(), key=lambda kv: -kv[1])[:10])
                out.append(Finding(
                    TL_TOK_CHAR_COVERAGE.id, TL_TOK_CHAR_COVERAGE.level,
                    "Characters the tokenizer has no piece for become the unknown token: the model never sees "
                    "what was said there (an accent, a script, a symbol the tokenizer was not trained on).",
                    Evidence({"coverage": Ratio(covered * 100), "limit": Ratio(th.min_char_coverage * 100),
                              "missing": len(bad), "distinct": len(self.chars), "chars": listed, "line": line,
                              "char": worst, "counts": sorted(bad.values(), reverse=True)[:10]},
                             "{coverage}% of the transcripts' characters are covered (under {limit}%): {missing} of "
                             "{distinct} distinct characters are not ({chars}); `{char}` first on line {line}"),
                    Location(path, line, 1, line, None)))
        if self.timed == 0:
            out.append(Finding(
                TP_TOK_TPS_NOT_MEASURED.id, TP_TOK_TPS_NOT_MEASURED.level,
                "Tokens per second of audio was not measured: no record has a duration (none declared, no audio "
                "read). This says nothing about the tokenizer.",
                Evidence({"scored": self.scored}, "0 of {scored} transcripts have a duration"), Location(path, None)))
        else:
            rate = self.timed_tokens / self.timed_s
            if rate > th.tokens_per_second_max and self.worst_tps is not None:
                w, line, n, secs = self.worst_tps
                out.append(Finding(
                    TP_TOK_HIGH_TPS.id, TP_TOK_HIGH_TPS.level,
                    "More tokens per second of audio than a speech model's text side is sized for: sequences "
                    "blow up in length (and memory), and the alignment between text and audio gets harder.",
                    Evidence({"rate": Ratio(rate), "limit": th.tokens_per_second_max, "timed": self.timed,
                              "scored": self.scored, "tokens": self.timed_tokens, "seconds": Ratio(self.timed_s),
                              "line": line, "line_rate": Ratio(w), "line_tokens": n, "line_seconds": Ratio(secs)},
                             "{rate} tokens/s over {limit} ({tokens} tokens in {seconds} s of {timed} of {scored} "
                             "transcripts); line {line} has {line_tokens} tokens in {line_seconds} s ({line_rate}/s)"),
                    Location(path, line, 1, line, None)))
        if self.words and self.split_words / self.words > th.max_char_split_words:
            line, n = max(self.split_lines.items(), key=lambda kv: (kv[1], -kv[0]))
            out.append(Finding(
                TL_TOK_CHAR_SPLIT.id, TL_TOK_CHAR_SPLIT.level,
                "Words encoded one piece per letter: the tokenizer was not trained on this language or casing, "
                "and every sequence is several times longer than it would be.",
                Evidence({"split": self.split_words, "words": self.words,
                          "share": Ratio(self.split_words / self.words * 100),
                          "limit": Ratio(th.max_char_split_words * 100), "line": line, "line_split": n,
                          "word": self.split_example[line], "min_letters": 4},
                         "{split} of {words} words of {min_letters}+ letters ({share}%, over {limit}%) are split into "
                         "single characters; line {line} has {line_split}, e.g. `{word}`"),
                Location(path, line, 1, line, None)))
        return out

    def measurement(self, path: str) -> Measurement:
        values: dict[str, Any] = {"transcripts": self.scored, "tokens": self.tokens, "timed": self.timed}
        text = f"{self.scored} transcripts, {self.tokens} tokens"
        if self.timed:
            values["tokens_per_s"] = Ratio(self.timed_tokens / self.timed_s)
            text += f", {self.timed_tokens / self.timed_s:.3g} tokens/s over {self.timed} timed"
        return Measurement("tokenizer", path, values, text)


def speech_report(path: str, layout: SpeechLayout, tok: Any = None, tok_problem: str | None = None,
                  th: Thresholds | None = None) -> Report:
    """The report of one speech manifest (``tok``: a loaded tokenizer; ``tok_problem``: why it is not)."""

    th = th or Thresholds()
    sc = SpeechCheck(path, layout, th)
    tt = TranscriptTokens(tok, th) if tok is not None else None
    sc.on_text = tt
    sc.feed(records(path, layout))
    sc.finish()
    findings = list(sc.findings)
    if tok_problem is not None:
        findings.append(tokenizer_not_checked(path, tok_problem))
    elif tt is not None and sc.records:
        findings += tt.findings(path)
    if sc.records == 0:
        findings.append(Finding(TL_PRE_NO_EXAMPLES.id, TL_PRE_NO_EXAMPLES.level,
                                "No line of the manifest could be read as a record, so nothing else was checked.",
                                Evidence({"lines": sc.lines}, "{lines} non-blank lines, no record"),
                                Location(path, None)))
    line_ends(path, findings)
    findings.sort(key=lambda f: (f.location.line or 0, f.id))
    rep = Report(path, "speech", dataset_verdict(findings), findings,
                 ran=["speech-manifest", "speech-audio", "speech-text", "speech-corpus"]
                 + (["tokenizer"] if tt is not None else []))
    values: dict[str, Any] = {"lines": sc.lines, "records": sc.records, "audio_read": sc.audio_read,
                              "layout": layout.describe()}
    text = f"{sc.records} records in {sc.lines} lines, {sc.audio_read} audio files read, layout {layout.describe()}"
    if sc.r_dur:
        values["hours"] = Ratio(sum(sc.r_dur) / 3600)
        d = sc.dist(sc.r_dur)
        values.update({"min_s": d["min"], "median_s": d["median"], "max_s": d["max"]})
        text += (f", {sum(sc.r_dur) / 3600:.3g} h of audio (durations min {d['min']:.3g} s / median "
                 f"{d['median']:.3g} s / max {d['max']:.3g} s)")
    rep.measurements.append(Measurement("speech", path, values, text))
    if tt is not None:
        rep.measurements.append(tt.measurement(path))
    return rep
