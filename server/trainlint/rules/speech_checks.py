"""The checks of ``trainlint preflight`` on a speech/TTS corpus, each finding on its manifest line.

One streamed pass over the manifest; each audio file is opened once and decoded for at most
``speech_max_decode_s``. The corpus-level rules (sample rate, channels, duration outliers, the characters-per-second
rate) need the whole corpus first: what they keep per line is a few numbers in ``array``s (about 20 bytes a line),
and byte-identity is found by size first, so only files whose size collides with another are hashed.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from array import array
from typing import Any

from ..core.model import Location
from ..readers.speech import INSTALL_SOUNDFILE, Audio, Record, SpeechLayout, read_audio
from .base import Evidence, Finding, Ratio, Related, Rule
from .speech import (
    TL_DATA_AUDIO_NOT_CHECKED,
    TL_DATA_BAD_RECORD,
    TP_DATA_CHAR_RATE_OUTLIER,
    TP_DATA_CLIPPING,
    TP_DATA_DUPLICATES,
    TP_DATA_DURATION_LONG,
    TP_DATA_DURATION_SHORT,
    TP_DATA_EMPTY_TRANSCRIPT,
    TP_DATA_INCONSISTENT_CHANNELS,
    TP_DATA_INCONSISTENT_SR,
    TP_DATA_MISSING_AUDIO,
    TP_DATA_MIXED_SCRIPTS,
    TP_DATA_SILENCE,
    TP_DATA_UNNORMALIZED,
    TP_DATA_UNREADABLE_AUDIO,
)
from .thresholds import Thresholds

MAX_PER_RULE = 50      # findings of one rule in one file; the evidence of each counts them all
# Threads reading audio ahead of the checks (I/O waits overlap). Measured on bench/speech.py's cold 10,000 files:
# 4 -> 6.0 s, 8 -> 3.6 s, 16 -> 3.3 s.
READERS = 8
READ_AHEAD = 64        # files in flight at most: what is held is their facts, never their samples

# What a TTS front end reads badly: a date (before plain digits, so it is named as one), digits, symbols.
_UNNORMALISED = (
    ("a date", re.compile(r"\b\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4}\b")),
    ("digits", re.compile(r"\d+(?:[.,]\d+)*")),
    ("a symbol", re.compile(r"[%$€£¥&@#+=<>/\\|~^*_°§©®™]")),
)
# Scripts that write one language together count as one.
_SCRIPT_GROUPS = {"HANGUL": "HANGUL"}
_CJK = ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC")  # Japanese writes Han, kana and the long-vowel mark together
_NO_SCRIPT = {"MODIFIER"}  # modifier letters (ʼ, ˈ) belong to no one script


def scripts(text: str) -> dict[str, tuple[int, int]]:
    """Writing system -> (letters, 0-based index of the first) of the letters of ``text``."""
    if text.isascii():
        at = next((i for i, c in enumerate(text) if c.isalpha()), None)
        return {} if at is None else {"LATIN": (sum(c.isalpha() for c in text), at)}
    out: dict[str, tuple[int, int]] = {}
    for i, c in enumerate(text):
        if not c.isalpha():
            continue
        name = unicodedata.name(c, "")
        if not name:
            continue
        words = name.split(" ")
        word = words[1] if words[0] in ("FULLWIDTH", "HALFWIDTH") and len(words) > 1 else words[0]
        if word in _NO_SCRIPT:
            continue
        group = "CJK" if word.startswith(_CJK) else _SCRIPT_GROUPS.get(word, word)
        n, first = out.get(group, (0, i))
        out[group] = (n + 1, first)
    return out


def median(xs: Any) -> float:
    s = sorted(xs)
    return float(s[len(s) // 2]) if s else float("nan")  # the upper median, as trainproof takes it


class SpeechCheck:
    """One pass over one manifest: the line rules as they stream, the corpus rules at ``finish``."""

    def __init__(self, path: str, layout: SpeechLayout, th: Thresholds | None = None) -> None:
        self.path, self.layout, self.th = path, layout, th or Thresholds()
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}
        self.lines = 0
        self.records = 0
        self.audio_read = 0
        self.needs: list[int] = []               # lines whose audio needs soundfile (the first, and how many)
        self.needs_count = 0
        # per readable file: line, duration, chars/s (NaN without text)
        self.r_line = array("l")
        self.r_dur = array("d")
        self.r_cps = array("d")
        self.rates: dict[int, tuple[int, list[int]]] = {}      # rate -> (count, first MAX_PER_RULE lines)
        self.channels: dict[int, tuple[int, list[int]]] = {}
        self.by_size: dict[int, tuple[int, str, bytes | None]] = {}  # size -> (first line, path, hash)
        self.by_hash: dict[bytes, int] = {}
        self.on_text: Any = None                 # (line, text, duration) for the tokenizer checks

    # -- streaming ---------------------------------------------------------------------------
    def feed(self, items: Any) -> None:
        """Records in order; their audio read ahead on a few threads (reading is I/O: the GIL is released in
        ``read`` and in numpy), at most ``READ_AHEAD`` files in flight so memory stays bounded."""
        from concurrent.futures import ThreadPoolExecutor

        th = self.th
        with ThreadPoolExecutor(max_workers=READERS) as pool:
            window: list[tuple[Record, Any]] = []
            for rec in items:
                fut = None
                if rec.problem is None and rec.path is not None:
                    fut = pool.submit(read_audio, rec.path, th.speech_max_decode_s, th.speech_clip_level,
                                      th.speech_silence_level)
                window.append((rec, fut))
                if len(window) >= READ_AHEAD:
                    self._drain(window)
            self._drain(window)

    def _drain(self, window: list[tuple[Record, Any]]) -> None:
        for rec, fut in window:
            self.lines += 1
            self._record(rec, fut.result() if fut is not None else None)
        window.clear()

    def _record(self, rec: Record, audio: Audio | None = None) -> None:
        if rec.problem is not None:
            at = {"column": rec.column} if rec.column is not None else {}
            self._flag(TL_DATA_BAD_RECORD, rec, {"problem": rec.problem, **at},
                       "line {line}: {problem}" + (" at column {column}" if at else ""),
                       "The line cannot be read as a record of audio and transcript; data loaders stop at it or "
                       "drop it silently.")
            return
        self.records += 1
        text = rec.text or ""
        self._text(rec, text)
        duration = rec.duration
        audio = self._audio(rec, audio)
        if audio is not None and audio.duration is not None and audio.problem is None:
            duration = audio.duration
        if self.on_text is not None and text.strip():
            self.on_text(rec.line, text, duration)

    def _text(self, rec: Record, text: str) -> None:
        if not text.strip():
            self._flag(TP_DATA_EMPTY_TRANSCRIPT, rec, {"field": self.layout.text},
                       "line {line}: the transcript (`{field}`) is empty",
                       "A clip without its words trains the model to map speech to nothing (ASR) or has nothing "
                       "to speak (TTS).", span=rec.text_span)
            return
        for what, rx in _UNNORMALISED:
            m = rx.search(text)
            if m is not None:
                col = self._col(rec, m.start())
                self._flag(TP_DATA_UNNORMALIZED, rec, {"what": what, "token": m.group(0)},
                           "line {line}: {what} `{token}` in the transcript",
                           "A TTS front end reads digits, dates and symbols its own way (or skips them): the audio "
                           "says words the text does not hold. Spell them out as they are spoken.",
                           span=(col, col + len(m.group(0))) if col is not None else rec.text_span)
                break
        sc = scripts(text)
        if len(sc) > 1:
            main = max(sc, key=lambda k: sc[k][0])
            other = min((k for k in sc if k != main), key=lambda k: sc[k][1])
            first = sc[other][1]
            col = self._col(rec, first)
            listed = ", ".join(f"{k.title()} {v[0]}" for k, v in sorted(sc.items(), key=lambda kv: -kv[1][0]))
            self._flag(TP_DATA_MIXED_SCRIPTS, rec, {"scripts": listed, "char": text[first], "script": other.title(),
                                                    "letters": {k.title(): v[0] for k, v in sc.items()}},
                       "line {line}: letters of {scripts}; the first {script} one is `{char}`",
                       "Letters of two writing systems in one transcript: often a look-alike character (Cyrillic "
                       "`а` for Latin `a`) that the model learns as a separate sound, or a foreign word the voice "
                       "cannot say.", span=(col, col + 1) if col is not None else rec.text_span)

    def _col(self, rec: Record, index: int) -> int | None:
        """0-based column on the raw line of the transcript's ``index``-th character (JSON may escape some)."""
        if rec.text_span is None or rec.text is None:
            return None
        start = rec.raw.find(rec.text[: index + 1][-16:], rec.text_span[0])
        if start < 0:
            return None
        return start + len(rec.text[: index + 1][-16:]) - 1

    def _audio(self, rec: Record, a: Audio | None) -> Audio | None:
        th = self.th
        assert rec.path is not None
        if a is None:
            a = read_audio(rec.path, th.speech_max_decode_s, th.speech_clip_level, th.speech_silence_level)
        if a.missing:
            self._flag(TP_DATA_MISSING_AUDIO, rec, {"audio": rec.audio, "resolved": rec.path},
                       "line {line}: `{audio}` does not exist (looked for `{resolved}`)",
                       "The record names an audio file that is not there: loaders raise on it or drop the record. "
                       "Relative paths are taken from the manifest's folder.", span=rec.audio_span)
            return None
        if a.needs is not None:
            self.needs_count += 1
            if not self.needs:
                self.needs.append(rec.line)
            return a
        if a.problem is not None:
            values: dict[str, Any] = {"audio": rec.audio, "bytes": a.size}
            problem = a.problem
            if a.declared_s is not None:  # the measured numbers are values, not text
                values.update({"declared_s": Ratio(a.declared_s), "held_s": Ratio(a.held_s or 0.0)})
            else:
                values["problem"], problem = problem, "{problem}"
            self._flag(TP_DATA_UNREADABLE_AUDIO, rec, values, "line {line}: `{audio}` ({bytes} bytes): " + problem,
                       "The audio cannot be used as it is: a decoder raises on it, or yields silence or a "
                       "shorter clip than its transcript.", span=rec.audio_span)
            return a
        self.audio_read += 1
        self._tally(self.rates, a.rate, rec.line)       # type: ignore[arg-type]
        self._tally(self.channels, a.channels, rec.line)  # type: ignore[arg-type]
        dur = a.duration or 0.0
        self.r_line.append(rec.line)
        self.r_dur.append(dur)
        n_chars = len((rec.text or "").strip())
        self.r_cps.append(n_chars / dur if n_chars and dur > 0 else float("nan"))
        self._duplicate(rec, a)
        if a.peak is not None and a.peak >= th.speech_clip_level:
            self._flag(TP_DATA_CLIPPING, rec, {"audio": rec.audio, "peak": Ratio(a.peak), "samples": a.clipped,
                                               "limit": th.speech_clip_level, "decoded": Ratio(a.decoded_s)},
                       "line {line}: `{audio}` peaks at {peak} of full scale ({samples} samples at or over {limit} "
                       "in the first {decoded} s)",
                       "Samples at full scale are usually clipped: the waveform was cut flat when it was recorded or "
                       "normalised, and the model learns the distortion.", span=rec.audio_span)
        if a.silence_s is not None and a.silence_s > th.speech_max_silence_s:
            self._flag(TP_DATA_SILENCE, rec, {"audio": rec.audio, "silence": Ratio(a.silence_s),
                                              "at": Ratio(a.silence_at_s or 0.0), "limit": th.speech_max_silence_s,
                                              "level": th.speech_silence_level},
                       "line {line}: `{audio}` is silent for {silence} s from {at} s (every sample at or under "
                       "{level} of full scale; limit {limit} s)",
                       "A long silence inside a clip teaches a TTS model to pause (or an aligner to skip) where the "
                       "transcript has no pause; trim it, or the clip may be a failed recording.", span=rec.audio_span)
        return a

    @staticmethod
    def _tally(table: dict[int, tuple[int, list[int]]], key: int, line: int) -> None:
        n, at = table.get(key, (0, []))
        if len(at) < MAX_PER_RULE:
            at.append(line)
        table[key] = (n + 1, at)

    def _duplicate(self, rec: Record, a: Audio) -> None:
        assert rec.path is not None
        seen = self.by_size.get(a.size)
        if seen is None:
            self.by_size[a.size] = (rec.line, rec.path, None)
            return
        first_line, first_path, first_hash = seen
        if first_hash is None:
            first_hash = _digest(first_path)
            if first_hash is None:
                return
            self.by_size[a.size] = (first_line, first_path, first_hash)
            self.by_hash.setdefault(first_hash, first_line)
        h = _digest(rec.path)
        if h is None:
            return
        first = self.by_hash.setdefault(h, rec.line)
        if first != rec.line:
            f = self._flag(TP_DATA_DUPLICATES, rec, {"audio": rec.audio, "first": first, "bytes": a.size},
                           "line {line}: `{audio}` is byte-identical to the audio of line {first} ({bytes} bytes; "
                           "byte-identical, not perceptual)",
                           "The same recording twice is weighted double, and a random split can put one copy on each "
                           "side. Byte identity only: the same speech re-encoded or with another header is not found.",
                           span=rec.audio_span)
            if f is not None:
                f.related.append(Related("first-occurrence", Location(self.path, first), f"first at line {first}"))

    def _flag(self, rule: Rule, rec: Record, values: dict[str, Any], template: str, message: str,
              span: tuple[int, int] | None = None) -> Finding | None:
        n = self.counts[rule.id] = self.counts.get(rule.id, 0) + 1
        if n > MAX_PER_RULE:
            return None
        return self._add(rule, rec.line, rec.raw, values, template, message, span)

    def _add(self, rule: Rule, line: int, raw: str | None, values: dict[str, Any], template: str, message: str,
             span: tuple[int, int] | None = None) -> Finding:
        if span is not None:
            loc = Location(self.path, line, span[0] + 1, line, span[1] + 1)
        else:
            loc = Location(self.path, line, 1, line, len(raw) + 1 if raw else None)
        f = Finding(rule.id, rule.level, message, Evidence({"line": line, **values}, template), loc)
        self.findings.append(f)
        return f

    # -- the corpus ---------------------------------------------------------------------------
    def finish(self) -> None:
        """The corpus rules, then the count of each rule into its findings' evidence."""
        self._minority(TP_DATA_INCONSISTENT_SR, self.rates, "Hz", "sample rate")
        self._minority(TP_DATA_INCONSISTENT_CHANNELS, self.channels, "channels", "channel count")
        self._durations()
        self._char_rate()
        if self.needs:
            line = self.needs[0]
            self.findings.append(Finding(
                TL_DATA_AUDIO_NOT_CHECKED.id, TL_DATA_AUDIO_NOT_CHECKED.level,
                "These audio files were not opened, so nothing about their audio (rate, duration, clipping, "
                "silence, duplicates) was checked; it says nothing about the data.",
                Evidence({"line": line, "count": self.needs_count, "records": self.records,
                          "install": INSTALL_SOUNDFILE},
                         "{count} of {records} audio files (the first on line {line}) are not WAV: reading them "
                         "needs soundfile: {install}"),
                Location(self.path, line, 1, line, None)))
        for f in self.findings:
            total = self.counts.get(f.id, 0)
            if total > 1 and "count" not in f.evidence.values:
                f.evidence.values["count"] = total
                f.evidence.template += " (one of {count})"

    def _minority(self, rule: Rule, table: dict[int, tuple[int, list[int]]], unit: str, what: str) -> None:
        if len(table) < 2:
            return
        order = sorted(table.items(), key=lambda kv: (-kv[1][0], kv[1][1][0]))
        major, (major_n, major_lines) = order[0]
        total = sum(n for n, _ in table.values())
        values = {"major": major, "major_n": major_n, "files": total,
                  "table": [[k, n] for k, (n, _) in order],  # the distribution, as numbers
                  "dist": ", ".join(f"{k} {unit} × {n}" for k, (n, _) in order)}
        emitted = 0
        for value, (_, lines) in order[1:]:
            for line in lines:
                if emitted >= MAX_PER_RULE:
                    break
                emitted += 1
                f = self._add(rule, line, None, {"value": value, **values},
                              "line {line}: {value} " + unit + ", the corpus is {major} " + unit + " ({major_n} of "
                              "{files} files: {dist})",
                              f"One {what} for the whole corpus is what a TTS/ASR recipe is configured for: a file "
                              "at another is resampled silently (if the loader does so) or trains at the wrong pitch "
                              "and speed.")
                f.related.append(Related("majority", Location(self.path, major_lines[0]),
                                         f"{major} {unit}, as {major_n} of {total} files (the first on line "
                                         f"{major_lines[0]})"))
        self.counts[rule.id] = total - major_n

    @staticmethod
    def dist(xs: Any) -> dict[str, Any]:
        """min / median / max / n of a distribution, as evidence values."""
        s = sorted(xs)
        return {"min": Ratio(s[0]), "median": Ratio(s[len(s) // 2]), "max": Ratio(s[-1]), "n": len(s)}

    def _durations(self) -> None:
        th = self.th
        if not self.r_dur:
            return
        dist = self.dist(self.r_dur)
        for rule, bad, limit, word in ((TP_DATA_DURATION_SHORT, lambda d: d < th.speech_min_duration_s,
                                        th.speech_min_duration_s, "under"),
                                       (TP_DATA_DURATION_LONG, lambda d: d > th.speech_max_duration_s,
                                        th.speech_max_duration_s, "over")):
            hits = [(ln, d) for ln, d in zip(self.r_line, self.r_dur, strict=True) if bad(d)]
            for ln, d in hits[:MAX_PER_RULE]:
                self._add(rule, ln, None, {"duration": Ratio(d), "limit": limit, "count": len(hits), **dist},
                          "line {line}: {duration} s, " + word + " {limit} s ({count} of {n} files; durations min "
                          "{min} s / median {median} s / max {max} s)",
                          "Very short clips (a cut word, a click) and very long ones (several sentences, hard to "
                          "align, most of a batch's memory) are where speech models train worst.")

    def _char_rate(self) -> None:
        th = self.th
        pairs = [(ln, r) for ln, r in zip(self.r_line, self.r_cps, strict=True) if r == r]
        if len(pairs) < th.speech_char_rate_min_records:
            return
        med = median(r for _, r in pairs)
        if not med > 0:
            return
        k = th.speech_char_rate_ratio
        out = [(ln, r) for ln, r in pairs if r > med * k or r < med / k]
        dist = self.dist(r for _, r in pairs)
        out.sort(key=lambda p: -abs(p[1] - med))
        worst = out[0][0] if out else None
        for ln, r in sorted(out[:MAX_PER_RULE]):
            ratio = r / med if r >= med else med / r
            tail = " — the worst" if ln == worst else ""
            self._add(TP_DATA_CHAR_RATE_OUTLIER, ln, None,
                      {**dist, "rate": Ratio(r), "median": Ratio(med), "ratio": Ratio(ratio), "limit": k,
                       "count": len(out), "side": "above" if r >= med else "below"},
                      "line {line}: {rate} chars/s, {ratio}x {side} the corpus median {median} chars/s (limit "
                      "{limit}x; {count} of {n} records are out; min {min} / max {max} chars/s)" + tail,
                      "A transcript much longer or shorter than its audio can hold is usually the wrong transcript for "
                      "the clip (a shifted manifest, a truncated file), which an aligner cannot recover.")


def _digest(path: str) -> bytes | None:
    from ..core.fsio import open_regular  # start-up: only when audio is read

    h = hashlib.blake2b(digest_size=16)
    try:
        with open_regular(path) as f:
            while block := f.read(1 << 20):
                h.update(block)
    except OSError:
        return None
    return h.digest()
