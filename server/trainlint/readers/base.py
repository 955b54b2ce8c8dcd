"""What every reader shares: reading a file from where it was left, and the reader contract.

A reader is fed chunks of *complete* lines (or records) and appends points to the LogFile.
The :class:`Tail` owns the file: it remembers the byte offset, the line number and the file's
identity, reads only the new bytes on each update, and starts over when the file shrank or was
replaced. The unterminated last line is read provisionally: its points are rolled back before the
next update, so a half-written line is never counted twice.
"""

from __future__ import annotations

import copy
import errno
import itertools
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import fsio
from ..core.fsio import TooLarge, open_regular
from ..core.lines import count_breaks, count_breaks_bytes, count_breaks_bytes_py, count_crlf
from ..core.model import LogFile, Series, series_key
from ..core.roles import Classified, RoleMap, classify

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

CHUNK = 4 << 20          # bytes read per call
MAX_LINE = 8 << 20       # a longer line is skipped, with a problem, without holding it in memory
MAX_DOCUMENT = 256 << 20  # a whole-document log (trainer_state.json) over this is not read at all
INDEX_STEP = 1 << 16   # bytes between line-index entries
IDENTITY_BYTES = 64      # the head of the file we compare to notice a replaced file


class Source:
    """What ``open_source`` returns: ``.log``, and ``.update()`` to read what was appended.

    ``update(budget)`` may stop after about ``budget`` bytes (a reader that can) and leave ``behind`` > 0: the
    bytes still to read. The log is then a prefix of the file and is not judged until ``behind`` is 0; the
    caller calls ``update`` again, doing other work in between (one 1 GB log must not hold others back).
    """

    log: LogFile
    behind: int = 0

    def update(self, budget: int | None = None) -> bool:
        raise NotImplementedError

    def progress(self) -> float | None:
        """The share of the file read so far while ``behind`` (None when not known)."""
        return None


class FormatReader(ABC):
    """Turns lines of one format into series, events and facts. No I/O, no judging."""

    format: ClassVar[str]
    #: Whole-document formats (trainer_state.json) are parsed from the full text each time.
    whole_document: ClassVar[bool] = False

    def __init__(self, log: LogFile, roles: RoleMap | None = None) -> None:
        self.log = log
        self.roles = roles or RoleMap()

    @abstractmethod
    def scan(self, text: str, first_line: int) -> None:
        """Read complete lines; ``text`` starts at line ``first_line`` (1-based)."""

    def finish(self) -> None:  # noqa: B027 - optional hook, most readers need nothing here
        """Called after every update, once the tail knows it is at the end of the file."""

    # Parser state that survives between chunks. Readers keep it in ``self.state``.
    state: Any = None
    #: While ``scan`` reads a chunk a Tail fed it: (the "\\n" and the "\\r" of its text), when the Tail counted them
    #: (the pure path); None otherwise. A reader needing them (the pure CSV read) need not count them again.
    breaks: tuple[int, int] | None = None
    #: Set by ``scan`` (told ``breaks``) when it found each "\\r" of its text followed by "\\n": the Tail's count of
    #: "\\n" is then the breaks', and it need not look for a lone "\\r" itself.
    paired: bool = False
    #: A reader that wants the "\\r\\n" of its text counted before ``scan`` (the stdout reader: the count of its lines
    #: says the text holds no other break, `split_lines`) says so; the Tail then tells it ``pairs``. The CSV reader
    #: does not: it finds its rows' "\\r" paired itself, and the count is then not made at all.
    pairs_first: bool = False
    #: While ``scan`` reads a chunk: its text's "\\r\\n", when ``pairs_first`` and the Tail counted them; else None.
    pairs: int | None = None
    #: The bytes a Tail reads a call for this reader, if fewer than ``CHUNK``: the pure-Python stdout, JSON-lines and
    #: CSV reads take 1 MB, as the strings of a 4 MB chunk's lines or cells (80k lines of an HF stdout, 10 MB of
    #: objects) outgrow the caches (their 100 MB logs, the same hour: 24.0x -> 20.6x, 30.5x -> 26.5x and 26.4x ->
    #: 24.3x their floors; the pure Coqui read 23.3x -> 23.7x). The compiled reads make no string a line: 1 MB
    #: chunks made the compiled Coqui and CSV reads slower (5.5x -> 6.0x), the others no faster.
    chunk: int | None = None

    def snapshot(self) -> Any:
        return copy.deepcopy(self.state)

    def restore(self, state: Any) -> None:
        self.state = state

    def series(self, name: str, default: Classified | None = None, **kw: Any) -> Series:
        """The series for ``name`` (created on first use) with its role from the role map."""
        ck = name if default is None else (name, default.role, default.aggregation)
        s = self._cache.get(ck)
        if s is None:
            s = self._cache[ck] = self._make_series(name, default, **kw)
        return s

    @property
    def _cache(self) -> dict[Any, Series]:
        cache = self.__dict__.get("_series_cache")
        if cache is None:
            cache = self.__dict__["_series_cache"] = {}
        return cache

    def forget_series(self) -> None:
        """Series objects were dropped from the log (rollback, restart): look them up afresh."""
        self.__dict__.pop("_series_cache", None)

    def _make_series(self, name: str, default: Classified | None = None, **kw: Any) -> Series:
        agg = kw.pop("aggregation", None)
        base = default or classify(name)
        if agg is not None:
            base = Classified(base.role, agg, base.component)
        key_agg = base.aggregation
        existing = self.log.series.get(series_key(name, key_agg))
        if existing is not None:
            return existing
        cls, source = self.roles.classify(name, base)
        s = Series(name=name, role=cls.role, aggregation=key_agg, component=cls.component,
                   role_source=source, **kw)
        self.log.series[s.key] = s
        return s


class SeriesOnly(FormatReader):
    """For sources that feed points themselves (stores, databases): series creation with roles, nothing more."""

    format = "points"

    def scan(self, text: str, first_line: int) -> None:
        raise NotImplementedError(f"{type(self).__name__} is fed points, not text")

    def key_for(self, name: str) -> str:
        return series_key(name, classify(name).aggregation)


@dataclass
class _Mark:
    lengths: dict[str, int]
    events: int
    problems: int
    facts: dict[str, Any]
    state: Any
    line_index: int


def bom_encoding(head: bytes) -> str | None:
    """The UTF-16 encoding a byte-order mark names (None for UTF-8 or no mark)."""
    if head.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if head.startswith(b"\xfe\xff"):
        return "utf-16-be"
    return None


class Tail(Source):
    """Keeps a file's read position and feeds new complete lines to a FormatReader."""

    def __init__(self, path: str, reader: FormatReader) -> None:
        self.path = path
        self.reader = reader
        self.log = reader.log
        self._reset_position()

    def _reset_position(self) -> None:
        self.encoding = "utf-8"         # or UTF-16 by its byte-order mark (Windows PowerShell's `>` writes it)
        self.offset = 0                 # bytes consumed as complete lines
        self.next_line = 1
        self.identity: tuple[int, int, bytes] | None = None
        self.size = -1
        self.mtime_ns = -1
        self._provisional: _Mark | None = None
        self._skipping_long_line = False
        self.end_mark = b""
        self.behind = 0

    def restart(self) -> None:
        """Forget everything read; the next update reads from the top."""
        fmt, path, members = self.log.format, self.log.path, self.log.members
        fresh = LogFile(path=path, format=fmt, members=members)
        self.log.__dict__.update(fresh.__dict__)
        self.reader.state = type(self.reader)(self.log, self.reader.roles).state
        self.reader.forget_series()
        self._reset_position()

    # -- provisional tail -------------------------------------------------------------------
    def _mark(self) -> _Mark:
        return _Mark(
            {k: len(s) for k, s in self.log.series.items()}, len(self.log.events), len(self.log.problems),
            dict(self.log.facts), self.reader.snapshot(), len(self.log.line_index),
        )

    def _rollback(self, mark: _Mark) -> None:
        for k in list(self.log.series):
            n = mark.lengths.get(k)
            if n is None:
                del self.log.series[k]
            else:
                self.log.series[k].truncate(n)
        del self.log.events[mark.events:]
        del self.log.problems[mark.problems:]
        self.log.facts = mark.facts
        self.reader.restore(mark.state)
        self.reader.forget_series()
        del self.log.line_index[mark.line_index:]

    # -- reading ----------------------------------------------------------------------------
    def update(self, budget: int | None = None) -> bool:
        """Read what was appended since the last call (at most about ``budget`` bytes of it: see ``behind``).
        Returns True if anything changed.

        Raises OSError when the file cannot be read at all; the caller reports it.
        """
        st = fsio.stat(self.path)
        if (st.st_size == self.size and st.st_mtime_ns == self.mtime_ns
                and self.identity is not None and self.identity[0] == st.st_ino):
            return False
        with open_regular(self.path) as f:
            head = f.read(IDENTITY_BYTES)
            replaced = self.identity is not None and (
                self.identity[0] != st.st_ino or st.st_size < self.offset or st.st_mtime_ns < self.mtime_ns
                or not head.startswith(self.identity[2][: len(head)])
                or (len(head) < len(self.identity[2]))
                or self._seen_end(f) != self.end_mark  # rewritten in place with the same head, and longer
            )
            if replaced or self.reader.whole_document:
                self.restart()
            if self._provisional is not None:
                self._rollback(self._provisional)
                self._provisional = None
            self.identity = (st.st_ino, st.st_dev, head)
            if self.offset == 0:
                self.encoding = bom_encoding(head) or "utf-8"
                if self.encoding != "utf-8":
                    self.log.facts["_encoding"] = self.encoding
            done = True
            if self.reader.whole_document:
                self._read_document(f)
            else:
                done = self._read_lines(f, budget, st.st_size)
            self.end_mark = self._seen_end(f)
        if done:
            self.size, self.mtime_ns, self.behind = st.st_size, st.st_mtime_ns, 0
        else:  # stopped at the budget: the next update goes on from here
            self.size, self.behind = -1, max(1, st.st_size - self.offset)
        return True

    def progress(self) -> float | None:
        return self.offset / (self.offset + self.behind) if self.behind else None

    def _seen_end(self, f: Any) -> bytes:
        """The last bytes read as complete lines: an append leaves them as they were, a rewrite does not."""
        start = max(0, self.offset - IDENTITY_BYTES)
        f.seek(start)
        return f.read(self.offset - start)

    def _read_document(self, f: Any) -> None:
        size = fsio.size_of(f)
        if size > MAX_DOCUMENT:
            raise TooLarge(errno.EFBIG, f"a JSON document of {size} bytes, over the {MAX_DOCUMENT >> 20} MB "
                                        "trainlint reads whole; it was not read", self.path)
        f.seek(0)
        data = f.read(min(MAX_DOCUMENT, size + (1 << 16)) + 1)  # not a 256 MB buffer for a 40 KB file
        self.log.line_index = [(1, 0)]
        text = data.decode(self.encoding, "replace").removeprefix("\ufeff")
        if "\ufffd" in text and self.encoding == "utf-8" and b"\xef\xbf\xbd" not in data:
            self.log.problem("the file is not valid UTF-8; undecodable bytes were replaced")
        self.reader.scan(text, 1)
        self.reader.finish()
        self.offset = len(data)
        self.next_line = count_breaks(text) + 1

    def _read_lines(self, f: Any, budget: int | None = None, size: int = 0) -> bool:
        """Feed complete lines to the reader; False when it stopped at ``budget`` bytes with more to read."""
        f.seek(self.offset)
        pending = b""
        pending_offset = self.offset
        start = self.offset
        most = min(CHUNK, self.reader.chunk or CHUNK)
        step = most if budget is None else max(1024, min(most, budget))
        while True:
            if (budget is not None and self.offset - start >= budget and self.offset < size
                    and not self._skipping_long_line):
                return False  # complete lines were read to self.offset; the rest (and any partial line) next time
            block = f.read(step)
            if not block:
                break
            if self._skipping_long_line:
                nl = block.find(b"\n")
                if nl < 0:
                    self.offset += len(block)
                    pending_offset = self.offset
                    continue
                self._skipping_long_line = False
                self.offset += nl + 1
                self.next_line += 1
                block = block[nl + 1:]
                pending_offset = self.offset
            data = pending + block if pending else block
            cut = self._cut(data, pending_offset)
            if cut == 0:
                pending = data
                if len(pending) > MAX_LINE:
                    self.log.problem(
                        f"line {self.next_line} is longer than {MAX_LINE >> 20} MB; it was skipped",
                        self.next_line)
                    self.offset = pending_offset + len(pending)
                    pending = b""
                    pending_offset = self.offset
                    self._skipping_long_line = True
                continue
            self._feed(data, cut, pending_offset)
            pending_offset = self.offset
            pending = b""
            if cut < len(data):  # the partial line is read again with the next block: no 4 MB copy of either
                f.seek(self.offset)
        # Whatever is read from here on is provisional and taken back before the next update:
        # the unterminated last line (a writer may be half-way through it) and what finish() adds.
        self._provisional = self._mark()
        if pending and not self._skipping_long_line:
            saved = (self.offset, self.next_line)
            self._feed(pending, len(pending), pending_offset)
            self.offset, self.next_line = saved
        self.reader.finish()
        return True

    def _cut(self, data: bytes, offset: int) -> int:
        """Just after the last line break of ``data`` (which starts at file offset ``offset``), 0 when none. In
        UTF-16 a break is two bytes at an even offset: cutting after its first byte would misalign the rest."""
        if self.encoding == "utf-8":
            return data.rfind(b"\n") + 1
        brk = b"\n\x00" if self.encoding == "utf-16-le" else b"\x00\n"
        end = len(data)
        while True:
            at = data.rfind(brk, 0, end)
            if at < 0:
                return 0
            if (offset + at) % 2 == 0:
                return at + 2
            end = at + 1

    def _index(self, data: bytes, cut: int, offset: int, breaks: list[int] | None = None) -> tuple[int, int]:
        """Index entries (line, byte offset) at the chunk ``data[:cut]``'s start and then every ~64 KB, each just
        after a ``\n`` (so no ``\r\n`` is cut; _window_ends): a finding's line is found by reading 64 KB, not the
        4 MB chunk. Returns (the breaks counted, the byte they were counted up to), so the chunk's own count goes on
        from there instead of counting the chunk twice. ``breaks``: each window's breaks, when counted already
        (the pure feed's), else count_breaks_bytes counts them."""
        index = self.log.line_index
        index.append((self.next_line, offset))
        if self.encoding != "utf-8":  # a byte search would cut a UTF-16 character: the chunk start only
            return 0, 0
        line, prev = self.next_line, 0
        for k, at in enumerate(_window_ends(data, cut)):
            line += breaks[k] if breaks is not None else count_breaks_bytes(data, prev, at)
            if at < cut:
                index.append((line, offset + at))
            prev = at
        return line - self.next_line, prev

    def _feed(self, data: bytes, cut: int, offset: int) -> None:
        """Read the chunk ``data[:cut]`` (file offset ``offset``) without copying it out of the block it was read
        in: the decode reads a view, the searches and counts take bounds (two copies of every 4 MB block were a
        third of the feed's own time). Without the compiled line counter, "\\n" and "\\r" are counted a window of
        the line index at a time, and the reader is told the chunk's (``breaks``), not to count them again; "\\r\\n"
        too (count_breaks_bytes_py's three passes) only when there is a "\\r" and the reader did not find each
        followed by "\\n" (``paired``: the pure CSV read checks its rows' breaks)."""
        if self.encoding != "utf-8":
            self._feed_utf16(data[:cut], offset)
            return
        view = memoryview(data)[:cut]
        try:
            text = str(view, "utf-8")
        except UnicodeDecodeError:  # undecodable bytes: replaced, and said once unless the file writes U+FFFD
            text = str(view, "utf-8", "replace")
            if data.find(b"\xef\xbf\xbd", 0, cut) < 0 and not self.log.facts.get("_bad_utf8"):
                self.log.facts["_bad_utf8"] = True
                self.log.problem("the file is not valid UTF-8; undecodable bytes were replaced", self.next_line)
        view.release()
        if not _heap.warm and not text.isascii():
            _heap.warm_up()
        if offset == 0:
            text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark
        nul = data.find(b"\x00", 0, cut) >= 0
        if nul:  # a NUL byte is a NUL character, and only that, in UTF-8
            text = self._without_nuls(text)
        if count_breaks_bytes is not count_breaks_bytes_py:  # the compiled counter: one pass already
            counted, upto = self._index(data, cut, offset)  # every cut is just after a \n: the counts add up
            self.reader.scan(text, self.next_line)
            n = counted + count_breaks_bytes(data, upto, cut)
        else:
            ends = _window_ends(data, cut)
            starts, stops = [0, *ends], [*ends, cut]
            breaks = list(map(data.count, itertools.repeat(b"\n"), starts, stops))
            returns = pairs = None
            if data.find(b"\r", 0, cut) >= 0:
                returns = list(map(data.count, itertools.repeat(b"\r"), starts, stops))
                if self.reader.pairs_first and not nul:
                    pairs = list(map(count_crlf, itertools.repeat(data), starts, stops))
                    self.reader.pairs = sum(pairs)
            # The decode keeps every "\r" and "\n" (neither is part of a character, nor of bytes it replaces); the
            # BOM and NULs dropped are neither. A NUL dropped from between a "\r" and a "\n" pairs them in the text
            # only: then the bytes are counted here.
            self.reader.breaks, self.reader.paired = (sum(breaks), sum(returns or ())), False
            try:
                self.reader.scan(text, self.next_line)
                if returns is not None and not (self.reader.paired and not nul):  # count_breaks_bytes_py's count
                    if pairs is None:
                        pairs = list(map(count_crlf, itertools.repeat(data), starts, stops))
                    breaks = [nl + cr - crlf for nl, cr, crlf in zip(breaks, returns, pairs, strict=True)]
            finally:
                self.reader.breaks, self.reader.paired, self.reader.pairs = None, False, None
            counted, upto = self._index(data, cut, offset, breaks)
            n = counted + breaks[-1]
        self.next_line += n if data[cut - 1:cut] in (b"\n", b"\r") else n + 1
        self.offset = offset + cut

    def _feed_utf16(self, chunk: bytes, offset: int) -> None:
        text = chunk.decode(self.encoding, "replace")
        if offset == 0:
            text = text.removeprefix("\ufeff")
        if "\x00" in text:
            text = self._without_nuls(text)
        self._index(chunk, len(chunk), offset)
        n = count_breaks(text)
        self.reader.scan(text, self.next_line)
        self.next_line += n if text.endswith(("\n", "\r")) else n + 1
        self.offset = offset + len(chunk)

    def _without_nuls(self, text: str) -> str:
        """Stray NUL bytes (what a crash or a full disk leaves mid-write) are dropped, noted once on their line."""
        if not self.log.facts.get("_nul"):
            self.log.facts["_nul"] = True
            line = self.next_line + count_breaks(text, 0, text.index("\x00"))
            self.log.problem(f"line {line} holds NUL bytes (a crash or a full disk mid-write?); they were ignored",
                             line)
        return text.replace("\x00", "")


class _heap:
    """Decoding a chunk with characters past Latin-1 (a tqdm bar's blocks) without new pages at each chunk.

    str() asks for the 2-byte string at twice the chunk's bytes and gives back what the characters take (fewer: a
    bar's block is three bytes). glibc serves a request above its mmap threshold with fresh pages and raises the
    threshold to the size of a freed mapped block only: to the returned size, short of the next request, so every
    chunk's string was mapped anew and faulted in (1.8k minor faults a 4 MB chunk, 45k for a 100 MB HF stdout, a
    sixth of the compiled read). One block of a chunk's widest string, freed once, raises the threshold above the
    request (mallopt(3), "dynamic mmap threshold"): the strings then reuse the heap. bytes() takes it zeroed by calloc,
    which maps it untouched: 15 µs and one fault (a bytearray's memset touched its 4,300 pages: 7 ms, and the check
    of an 188-line stdout log took 1.08x its time). Elsewhere an allocation as cheap."""

    warm = False

    @classmethod
    def warm_up(cls) -> None:
        cls.warm = True
        bytes(4 * CHUNK + (1 << 20))  # 4 bytes a character, a chunk and a pending line's start


def _window_ends(data: bytes, cut: int) -> list[int]:
    """Where the line index's windows of ``data[:cut]`` end: about every 64 KB, each just after a "\\n"."""
    ends, prev = [], 0
    while prev + INDEX_STEP < cut:
        at = data.rfind(b"\n", prev, prev + INDEX_STEP) + 1
        if at <= prev:  # 64 KB without a \n (a progress bar's redraws): index at the next one
            at = data.find(b"\n", prev + INDEX_STEP, cut) + 1
            if at <= 0:
                break
        ends.append(at)
        prev = at
    return ends


def line_format(fmt: str, reader: type[FormatReader]) -> Callable[[str, RoleMap | None], Source]:
    """How a line-based format is opened: its reader behind a ``Tail`` (for a ``FormatSpec``)."""
    def open_tail(path: str, roles: RoleMap | None = None) -> Source:
        return Tail(path, reader(LogFile(path=path, format=fmt), roles))
    return open_tail
