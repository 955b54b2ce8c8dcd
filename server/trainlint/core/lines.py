"""Line breaks as the LSP counts them: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (progress bars).

Python's ``str.splitlines`` also breaks on form feeds and Unicode separators, which editors do
not, so every reader counts lines through these helpers and findings land where editors look.
"""

from __future__ import annotations

import re

from .accel import CLINES

# Built-in patterns look at the first 64 KB of a line: a value past that is not in any real log, and a
# bound keeps every match linear in what a hostile line can make it scan.
MAX_MATCH_LINE = 1 << 16

_BREAK_B = re.compile(rb"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` without their breaks; a final break does not start an empty line."""
    if "\r" not in text:
        parts = text.split("\n")
    else:
        # Windows line ends, then a lone \r (progress bars' redraws) made \n: str.split rather than the regex (10 MB
        # CSV: 0.11 s, the regex 0.16 s; a 4 MB chunk of an HF stdout with tqdm redraws: 0.020 s, the regex 0.059 s).
        # After the first replace every \r left is a lone one ("\r\r\n" -> "\r\n" -> "\n\n": two breaks either way).
        joined = text.replace("\r\n", "\n")
        if "\r" in joined:
            joined = joined.replace("\r", "\n")
        parts = joined.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def count_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    if end is None:
        end = len(text)
    n = text.count("\n", start, end)
    if text.find("\r", start, end) >= 0:
        n += text.count("\r", start, end) - text.count("\r\n", start, end)
    return n


def count_breaks_bytes_py(data: bytes, start: int = 0, end: int | None = None) -> int:
    """The breaks in ``data[start:end]``: up to four passes of bytes.count (each about 2 GB/s); the compiled line
    counter (``_clines``) makes one, and stands in for this function when it is built."""
    if end is None:
        end = len(data)
    n = data.count(b"\n", start, end)
    if data.find(b"\r", start, end) >= 0:
        n += data.count(b"\r", start, end) - data.count(b"\r\n", start, end)
    return n


count_breaks_bytes = count_breaks_bytes_py if CLINES is None else CLINES.count_breaks
