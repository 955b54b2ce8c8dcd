"""Speech/TTS corpora: the manifest's records (each with its line and where its fields sit) and the audio facts
the checks need, read with a bound.

A speech corpus is recognised by its layout, not by a flag:

- LJSpeech / Coqui ``metadata.csv``: ``id|text|normalized`` without a header, audio at ``wavs/<id>.wav``;
- an HF ``audiofolder`` ``metadata.csv``: a comma CSV whose header has ``file_name`` and a text column;
- a JSON-lines manifest: NeMo's ``audio_filepath``/``duration``/``text``, or ``path``/``audio``/``file_name`` with
  ``sentence``/``transcript``/``transcription``.

Relative audio paths are resolved against the manifest's folder (where the trainer's data loader resolves them,
and what trainproof 0.22 fixed). Audio is opened through :func:`trainlint.core.fsio.open_regular` only; WAV is read with
the standard library's ``wave``, anything else through ``soundfile`` when it is installed. At most
``max_decode_s`` seconds of samples are decoded per file: a header that declares hours is measured from its header
and its first minutes, never read whole.
"""

from __future__ import annotations

import csv
import json
import os
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.fsio import open_regular
from .dataset import field_span, lines

AUDIO_KEYS = ("audio_filepath", "audio_path", "path", "audio", "file_name", "file", "wav")
TEXT_KEYS = ("text", "normalized_text", "sentence", "transcript", "transcription", "normalized")
AUDIO_EXT = (".wav", ".flac", ".ogg", ".opus", ".mp3", ".m4a", ".aiff", ".aif", ".au", ".sph")
WAV_EXT = (".wav", ".wave")
# Samples decoded per file at most, whatever its header says (60 s of 8-channel 192 kHz float is 369 MB; of 48 kHz
# 16-bit stereo 11.5 MB): with the eight read-ahead threads, at most 256 MB of samples are held at once.
MAX_DECODE_BYTES = 32 << 20
INSTALL_SOUNDFILE = "pip install soundfile (or pip install 'trainlint[speech]')"


@dataclass
class SpeechLayout:
    kind: str           # "ljspeech" | "audiofolder" | "jsonl"
    audio: str          # the audio field (the id column for LJSpeech)
    text: str           # the text field the trainer reads
    header: list[str] = field(default_factory=list)  # audiofolder: the CSV header

    def describe(self) -> str:
        if self.kind == "ljspeech":
            return f"LJSpeech metadata.csv (id|text|normalized; text from `{self.text}`)"
        if self.kind == "audiofolder":
            return f"audiofolder metadata.csv (`{self.audio}`, `{self.text}`)"
        return f"speech manifest (`{self.audio}`, `{self.text}`)"


@dataclass
class Record:
    line: int
    raw: str
    audio: str | None = None                # as written in the manifest
    path: str | None = None                 # resolved against the manifest's folder
    text: str | None = None
    duration: float | None = None           # declared by the manifest (NeMo), seconds
    audio_span: tuple[int, int] | None = None  # 0-based [start, end) on the raw line
    text_span: tuple[int, int] | None = None
    problem: str | None = None              # why the line is not a record
    column: int | None = None               # where the JSON stops making sense (1-based)


def _audio_value(v: Any) -> str | None:
    if isinstance(v, dict):  # HF datasets write {"path": ..., "bytes": ...}
        v = v.get("path")
    return v if isinstance(v, str) else None


def _looks_audio(v: Any) -> bool:
    s = _audio_value(v)
    return bool(s) and s.lower().endswith(AUDIO_EXT)  # type: ignore[union-attr]


def layout_of(path: str) -> SpeechLayout | None:
    """The speech layout of ``path`` from its name and first line, or None (not a speech corpus). Reads at most
    64 KB: it runs for every candidate file of a walk."""
    name = os.path.basename(path).lower()
    ext = os.path.splitext(name)[1]
    if ext not in (".csv", ".txt", ".jsonl", ".json", ".tsv"):
        return None
    try:
        with open_regular(path) as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    first = next((ln for ln in head.splitlines() if ln.strip()), "").lstrip("\ufeff")
    if not first:
        return None
    if ext in (".jsonl", ".json"):
        if not first.startswith("{"):
            return None
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):  # a hostile line nested 100,000 deep
            return None
        if not isinstance(obj, dict):
            return None
        audio = next((k for k in AUDIO_KEYS if k in obj and (k == "audio_filepath" or _looks_audio(obj[k]))), None)
        text = next((k for k in TEXT_KEYS if isinstance(obj.get(k), str)), None)
        return SpeechLayout("jsonl", audio, text) if audio and text else None
    if "|" in first and ext in (".csv", ".txt"):
        cols = first.split("|")
        beside = os.path.isdir(os.path.join(os.path.dirname(os.path.abspath(path)), "wavs"))
        if 2 <= len(cols) <= 3 and (name.startswith("metadata") or beside) and cols[0].strip() \
                and " " not in cols[0].strip():
            return SpeechLayout("ljspeech", "id", "normalized" if len(cols) == 3 else "text")
        return None
    if ext == ".csv":
        try:
            header = [h.strip() for h in next(csv.reader([first]))]
        except (csv.Error, StopIteration):
            return None
        if "file_name" in header:
            text = next((k for k in ("transcription", "text", "sentence", "transcript", "normalized_text")
                         if k in header), None)
            if text:
                return SpeechLayout("audiofolder", "file_name", text, header)
    return None


def _span(raw: str, value: str, start: int = 0) -> tuple[int, int] | None:
    at = raw.find(value, start) if value else -1
    return (at, at + len(value)) if at >= 0 else None


def records(path: str, lay: SpeechLayout) -> Iterator[Record]:
    """Each non-blank line of the manifest as a record (the audiofolder header is not one), streamed."""
    folder = os.path.dirname(os.path.abspath(path))
    header_done = lay.kind != "audiofolder"
    for n, raw in lines(path):
        if raw == "\x00too-long":
            yield Record(n, "", problem="the line is over 64 MB and was not read")
            continue
        if not header_done:
            header_done = True
            continue
        rec = Record(n, raw)
        if lay.kind == "jsonl":
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as e:
                rec.problem, rec.column = f"not JSON ({e.msg})", e.colno
                yield rec
                continue
            except (ValueError, RecursionError):
                rec.problem = "not JSON (nested too deeply)"
                yield rec
                continue
            if not isinstance(obj, dict):
                rec.problem = f"JSON but not an object ({type(obj).__name__})"
                yield rec
                continue
            rec.audio = _audio_value(obj.get(lay.audio))
            t = obj.get(lay.text)
            rec.text = t if isinstance(t, str) else ("" if t is None else None)
            d = obj.get("duration")
            if isinstance(d, int | float) and not isinstance(d, bool):
                rec.duration = float(d)
            rec.audio_span = field_span(raw, lay.audio)
            rec.text_span = field_span(raw, lay.text)
            if rec.audio is None:
                rec.problem = f"no `{lay.audio}` path" if lay.audio not in obj else f"`{lay.audio}` is not a path"
            elif rec.text is None:
                rec.problem = f"`{lay.text}` is {type(t).__name__}, not text"
        elif lay.kind == "ljspeech":
            cols = raw.split("|")
            if len(cols) < 2:
                rec.problem = "fewer than 2 `|`-separated fields (id|text|normalized)"
                yield rec
                continue
            rec.audio = os.path.join("wavs", cols[0].strip() + ".wav")
            rec.audio_span = (0, len(cols[0]))
            idx = 2 if lay.text == "normalized" and len(cols) >= 3 else 1
            rec.text = cols[idx].strip()
            start = sum(len(c) + 1 for c in cols[:idx])
            rec.text_span = (start, start + len(cols[idx])) if cols[idx] else (start, start)
        else:
            try:
                row = next(csv.reader([raw]))
            except (csv.Error, StopIteration) as e:
                rec.problem = f"not a CSV row ({e})"
                yield rec
                continue
            values = dict(zip(lay.header, row, strict=False))
            rec.audio = values.get(lay.audio) or None
            rec.text = values.get(lay.text, "")
            rec.audio_span = _span(raw, rec.audio or "")
            rec.text_span = _span(raw, rec.text, rec.audio_span[1] if rec.audio_span else 0)
            if rec.audio is None:
                rec.problem = f"no `{lay.audio}` value"
        if rec.audio is not None:
            rec.path = rec.audio if os.path.isabs(rec.audio) else os.path.join(folder, rec.audio)
        yield rec


# -- audio ----------------------------------------------------------------------------------------
@dataclass
class Audio:
    """What the checks need of one audio file, or why it could not be read."""

    size: int = 0
    rate: int | None = None
    channels: int | None = None
    frames: int | None = None        # what the file holds (the header's count when it holds less is a problem)
    peak: float | None = None        # max |sample| over the decoded part, full scale 1.0
    clipped: int = 0                 # decoded samples at or above the clipping level
    silence_s: float | None = None   # the longest run of silent samples in the decoded part
    silence_at_s: float | None = None  # where it starts
    decoded_s: float = 0.0           # seconds of audio decoded (at most max_decode_s)
    problem: str | None = None       # unreadable or empty: what is wrong
    needs: str | None = None         # not read: the library it needs
    missing: bool = False            # the file does not exist
    declared_s: float | None = None  # a WAV cut short: what its header declares and what the file holds
    held_s: float | None = None

    @property
    def duration(self) -> float | None:
        return self.frames / self.rate if self.frames is not None and self.rate else None


def _soundfile() -> Any:
    try:
        import soundfile
    except (ImportError, OSError):  # OSError: the wheel's libsndfile cannot be loaded
        return None
    return soundfile


def read_audio(path: str, max_decode_s: float, clip_level: float, silence_level: float) -> Audio:
    """The facts of one audio file. Never raises for a bad file: its problem is in the result."""
    a = Audio()
    try:
        with open_regular(path) as f:
            a.size = os.fstat(f.fileno()).st_size
            if a.size == 0:
                a.problem = "the file is empty (0 bytes)"
                return a
            if path.lower().endswith(WAV_EXT) or f.read(4) == b"RIFF":
                f.seek(0)
                try:
                    _read_wav(f, a, max_decode_s, clip_level, silence_level)
                    return a
                except wave.Error as e:
                    if "unknown format" not in str(e):  # float or compressed WAV: soundfile reads those
                        a.problem = f"not a readable WAV ({e})"
                        return a
                except EOFError:
                    a.problem = "not a readable WAV (the header is cut short)"
                    return a
            sf = _soundfile()
            if sf is None:
                a.needs = "soundfile"
                return a
            f.seek(0)
            _read_soundfile(sf, f, a, max_decode_s, clip_level, silence_level)
    except FileNotFoundError:
        a.missing, a.problem = True, "does not exist"
    except OSError as e:
        a.problem = f"cannot be opened ({e.strerror or e})"
    except Exception as e:  # soundfile raises its own LibsndfileError (a RuntimeError) and others for bad files
        a.problem = f"cannot be decoded ({type(e).__name__}: {str(e)[:120]})"
    return a


def _read_wav(f: Any, a: Audio, max_decode_s: float, clip_level: float, silence_level: float) -> None:
    with wave.open(f, "rb") as w:
        a.rate, a.channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        declared = w.getnframes()
        if not a.rate or not a.channels or not width:
            a.problem = f"the header declares {a.rate} Hz, {a.channels} channels, {width * 8}-bit samples"
            return
        data_at = f.tell()  # wave leaves the file at the start of the data chunk
        held = max(0, (a.size - data_at) // (width * a.channels))
        a.frames = min(declared, held)
        if declared > held:
            a.declared_s, a.held_s = declared / a.rate, held / a.rate
            a.problem = "cut short: the header declares {declared_s} s, the file holds {held_s} s"
            return
        if a.frames == 0:
            a.problem = "no samples (0 frames)"
            return
        n = min(a.frames, int(max_decode_s * a.rate), MAX_DECODE_BYTES // (width * a.channels))
        data = w.readframes(n)
    import numpy as np  # only when samples are analysed (numpy comes with tensorboard)

    if width == 1:
        x = np.frombuffer(data, dtype=np.uint8).astype(np.int16) - 128
        full = 128.0
    elif width == 3:
        b = np.frombuffer(data[: len(data) // 3 * 3], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        x = (b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16))
        x = np.where(x >= 1 << 23, x - (1 << 24), x)
        full = float(1 << 23)
    else:
        x = np.frombuffer(data, dtype="<i2" if width == 2 else "<i4")
        full = float(1 << (8 * width - 1))
    if a.channels == 1:
        _analyse_int(x, full, a, clip_level, silence_level)
    else:  # the loudest channel of each frame
        wide = np.abs(x.astype(np.int32 if width < 4 else np.int64))  # abs(-32768) does not fit int16
        _analyse(wide.reshape(-1, a.channels).max(axis=1) / full, a, clip_level, silence_level)


def _analyse_int(x: Any, full: float, a: Audio, clip_level: float, silence_level: float) -> None:
    """:func:`_analyse` on mono integer samples without making a float copy (most corpora: 16-bit mono)."""
    import math

    import numpy as np

    n = len(x)
    a.decoded_s = n / a.rate if a.rate else 0.0
    if n == 0:
        return
    a.peak = max(int(x.max()), -int(x.min())) / full
    c = math.ceil(clip_level * full - 1e-9)
    a.clipped = int(np.count_nonzero(x >= c)) + int(np.count_nonzero(x <= -c))
    q = math.floor(silence_level * full + 1e-9)
    _longest_quiet(np.flatnonzero((x <= q) & (x >= -q)), n, a)


def _longest_quiet(quiet: Any, n: int, a: Audio) -> None:
    """The longest run of consecutive indices in ``quiet`` (sorted sample indices of silent frames)."""
    import numpy as np

    if len(quiet) == 0:
        a.silence_s, a.silence_at_s = 0.0, 0.0
        return
    breaks = np.flatnonzero(np.diff(quiet) != 1)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(quiet) - 1]))
    lengths = ends - starts + 1
    i = int(lengths.argmax())
    a.silence_s = float(lengths[i]) / a.rate  # type: ignore[operator]
    a.silence_at_s = float(quiet[starts[i]]) / a.rate  # type: ignore[operator]


def _read_soundfile(sf: Any, f: Any, a: Audio, max_decode_s: float, clip_level: float,
                    silence_level: float) -> None:
    with sf.SoundFile(f) as s:
        a.rate, a.channels, a.frames = s.samplerate, s.channels, s.frames
        if not a.frames:
            a.problem = "no samples (0 frames)"
            return
        x = s.read(frames=min(a.frames, int(max_decode_s * a.rate), MAX_DECODE_BYTES // (4 * a.channels)),
                   dtype="float32", always_2d=True)
    import numpy as np

    _analyse(np.abs(x).max(axis=1), a, clip_level, silence_level)


def _analyse(mag: Any, a: Audio, clip_level: float, silence_level: float) -> None:
    """Peak, clipped samples and the longest silent run of a frame-wise magnitude (the loudest channel)."""
    import numpy as np

    n = len(mag)
    a.decoded_s = n / a.rate if a.rate else 0.0
    if n == 0:
        return
    a.peak = float(mag.max())
    a.clipped = int(np.count_nonzero(mag >= clip_level))
    _longest_quiet(np.flatnonzero(mag <= silence_level), n, a)
