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


# What str.splitlines breaks at besides "\n", "\r" and "\r\n"; editors do not
_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` without their breaks; a final break does not start an empty line."""
    if "\r" not in text:
        parts = text.split("\n")
    elif not any(map(text.__contains__, _OTHER_BREAKS)):
        # str.splitlines breaks where the LSP does when the text holds none of the others (a 4 MB chunk of an HF
        # stdout with tqdm redraws, a 2-byte str: 0.014 s, the two replaces and the split below 0.051 s; the eight
        # searches 0.002 s). It ends no line with an empty one for a final break, as the pop below.
        return text.splitlines()
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


def lines_within(text: str, limit: int) -> bool:
    """No line of ``text`` is longer than ``limit`` characters: every window of half of it, at multiples of that,
    holds a break (a longer line would hold a whole window). False may be wrong (a line of half to all of the
    limit); True is not. A few str.find calls a chunk, where ``max(map(len, lines))`` is a call a line. (The stdout
    reader's bound on a matched line, the CSV reader's on a cell: csv's field limit.)"""
    w = max(1, limit // 2)
    return all(text.find("\n", a, a + w) >= 0 or text.find("\r", a, a + w) >= 0
               for a in range(0, len(text) - w + 1, w))


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
