"""Line breaks as the LSP counts them: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (progress bars).

Python's ``str.splitlines`` also breaks on form feeds and Unicode separators, which editors do
not, so every reader counts lines through these helpers and findings land where editors look.
"""

from __future__ import annotations

import itertools
import re

from .accel import CLINES

# Built-in patterns look at the first 64 KB of a line: a value past that is not in any real log, and a
# bound keeps every match linear in what a hostile line can make it scan.
MAX_MATCH_LINE = 1 << 16

_BREAK_B = re.compile(rb"\r\n|\r|\n")
_CRLF_B = re.compile(rb"\r\n")


# What str.splitlines breaks at besides "\n", "\r" and "\r\n"; editors do not
_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(text: str, breaks: int | None = None) -> list[str]:
    """Lines of ``text`` without their breaks; a final break does not start an empty line. ``breaks``: the text's
    "\\n", lone "\\r" and "\\r\\n", when counted already (the pure feed's counts of the bytes)."""
    if "\r" not in text:
        parts = text.split("\n")
    elif (breaks is not None and text[-1:] not in _OTHER_BREAKS
          and len(lines := text.splitlines()) == breaks + (text[-1:] not in ("\n", "\r", ""))):
        # str.splitlines gives one line more for each other break: with as many lines as "\n", "\r" and "\r\n"
        # make, it holds none (a last character that is one would end the last line in its place: not taken). The
        # eight searches below took 0.07 s of a 100 MB HF stdout's pure read (a 2-byte str: 0.27 ms a 4 MB chunk each).
        return lines
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
        n += data.count(b"\r", start, end) - count_crlf(data, start, end)
    return n


def count_crlf(data: bytes, start: int = 0, end: int | None = None) -> int:
    """The "\\r\\n" in ``data[start:end]``: the regex's literal search, not bytes.count, whose search for a two-byte
    needle stops at each "\\r" (an HF stdout's 1.6M lone ones in 100 MB: 0.095 s, the regex 0.056 s)."""
    start, end, _ = slice(start, end).indices(len(data))  # bounds as bytes.count takes them (negative ones too)
    return len(_CRLF_B.findall(data, start, end))


count_breaks_bytes = count_breaks_bytes_py if CLINES is None else CLINES.count_breaks


def line_span_py(data: bytes, k: int) -> tuple[int, int, bool] | None:
    """(start, end, last): the bounds of the bytes of line ``k`` (from 0) of ``data`` without its break, as
    ``split_lines`` would split the decoded text (bytes.splitlines breaks only at "\\n", "\\r\\n" and "\\r"), and
    whether it is the last line of ``data``; None when ``data`` has ``k`` lines or fewer. Why bytes: a finding's
    line was found by decoding the 64 KB of the line index around it and splitting all of it, 0.13 ms a lookup in an
    HF stdout with tqdm bars; now one line is decoded (``_clines.line_span`` finds it without splitting)."""
    lines = data.splitlines(keepends=True)
    if not 0 <= k < len(lines):
        return None
    start = sum(map(len, itertools.islice(lines, k)))
    line = lines[k]
    brk = 2 if line.endswith(b"\r\n") else 1 if line[-1:] in (b"\n", b"\r") else 0
    return start, start + len(line) - brk, k == len(lines) - 1


line_span = line_span_py if CLINES is None else CLINES.line_span


def utf8_line(block: bytes, k: int) -> tuple[str, bool] | None:
    """Line ``k`` (from 0) of a UTF-8 ``block`` and whether it is the block's last, as ``split_lines`` of the
    block decoded (invalid bytes replaced, a leading byte-order mark dropped) gives them; None when there is none.
    Only the line's bytes are decoded: a break is one byte in UTF-8, never inside a character."""
    if block.startswith(b"\xef\xbb\xbf"):
        block = block[3:]
    span = line_span(block, k)
    if span is None:
        return None
    return block[span[0]:span[1]].decode("utf-8", "replace"), span[2]
