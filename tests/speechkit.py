"""Small speech corpora made in the tests: WAV files written with the standard library's ``wave``."""

from __future__ import annotations

import math
import struct
import wave
from pathlib import Path


def write_wav(path: Path, seconds: float = 1.0, rate: int = 16000, channels: int = 1, amp: float = 0.3,
              freq: float = 220.0, silence: tuple[float, float] | None = None, clip: bool = False,
              width: int = 2) -> Path:
    """A tone of ``amp`` of full scale; ``silence`` = (start, length) in seconds of exact zeros; ``clip``: the
    tone at 1.5x full scale, cut flat at full scale."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = int(seconds * rate)
    full = (1 << (8 * width - 1)) - 1
    a = 1.5 if clip else amp
    s0, s1 = (int(silence[0] * rate), int((silence[0] + silence[1]) * rate)) if silence else (0, 0)
    frames = bytearray()
    for i in range(n):
        v = 0.0 if s0 <= i < s1 else a * math.sin(2 * math.pi * freq * i / rate)
        q = max(-full, min(full, round(v * full)))
        frames += struct.pack("<h", q) * channels if width == 2 else bytes([q + 128]) * channels
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(bytes(frames))
    return path
