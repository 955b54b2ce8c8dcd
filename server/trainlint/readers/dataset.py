"""Fine-tuning datasets as JSON lines: one example per line, streamed, each with where its text sits.

A dataset is not a training log: no step, no metric, a text (or a chat) per line. The layout is taken from
the first object (or named by the user): a chat list (``messages``, ``conversations``; OpenAI's
role/content or ShareGPT's from/value), a ``text`` field, or a prompt/response pair (prompt/completion,
instruction/input/output, question/answer, query/response, input/output).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core.fsio import open_regular
from ..core.lines import split_lines

CHAT_FIELDS = ("messages", "conversations", "conversation")
PAIRS = (("prompt", "completion"), ("instruction", "input", "output"), ("question", "answer"),
         ("query", "response"), ("input", "output"), ("prompt", "response"))
ROLE_KEYS = (("role", "content"), ("from", "value"))
ASSISTANT = {"assistant", "gpt", "model", "bot"}
USER = {"user", "human"}
SYSTEM = {"system"}
CHUNK = 4 << 20
MAX_LINE = 64 << 20  # one example; a longer line is reported, never held whole


@dataclass
class Layout:
    kind: str                        # "chat" | "text" | "fields"
    fields: tuple[str, ...]          # the chat field, the text field, or the pair's fields in order
    roles: tuple[str, str] = ("role", "content")

    def describe(self) -> str:
        if self.kind == "chat":
            return f"chat turns in `{self.fields[0]}` ({self.roles[0]}/{self.roles[1]})"
        return " + ".join(f"`{f}`" for f in self.fields)


@dataclass
class Example:
    line: int
    raw: str = ""
    obj: dict[str, Any] | None = None
    problem: str | None = None       # why the line is not an example (not JSON, not an object, too long)
    column: int | None = None        # where the JSON stops making sense


def lines(path: str) -> Iterator[tuple[int, str]]:
    """(1-based line, text) of every non-blank line, streamed in chunks; a line over MAX_LINE is yielded
    as the marker ``\\x00too-long`` and skipped without being held."""
    with open_regular(path) as f:
        pending = b""
        line_no = 1
        skipping = False
        while True:
            block = f.read(CHUNK)
            if not block:
                break
            data = pending + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > MAX_LINE and not skipping:
                    skipping = True
                    yield line_no, "\x00too-long"
                pending = b"" if skipping else data
                continue
            head, pending = data[:cut], data[cut:]
            if skipping:
                nl = head.find(b"\n")
                head = head[nl + 1:]
                line_no += 1
                skipping = False
            for text in split_lines(head.decode("utf-8", "replace")):
                if text.strip():
                    yield line_no, text
                line_no += 1
        if pending.strip() and not skipping:
            yield line_no, pending.decode("utf-8", "replace")


def examples(path: str) -> Iterator[Example]:
    for n, text in lines(path):
        if text == "\x00too-long":
            yield Example(n, problem=f"longer than {MAX_LINE >> 20} MB; not read")
            continue
        try:
            obj = json.loads(text)
        except ValueError as e:
            yield Example(n, text, problem=f"not valid JSON ({getattr(e, 'msg', e)})", column=getattr(e, "colno", None))
            continue
        except RecursionError:
            yield Example(n, text, problem="not valid JSON (nested too deep)")
            continue
        if not isinstance(obj, dict):
            yield Example(n, text, problem=f"valid JSON but {type(obj).__name__}, not an object")
            continue
        yield Example(n, text, obj)


def looks_like(head: str) -> bool:
    """The first non-blank line is an object with a text or chat layout (a metrics log's lines are not)."""
    for line in head.splitlines()[:20]:
        if line.strip():
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return False
            return isinstance(obj, dict) and layout_of(obj) is not None
    return False


def layout_of(obj: dict[str, Any], text_field: str | None = None, chat_field: str | None = None) -> Layout | None:
    """The layout the first object shows (or the one the user named); None when no known field is there."""
    if chat_field:
        return Layout("chat", (chat_field,), _roles(obj.get(chat_field)))
    if text_field:
        return Layout("text", (text_field,))
    for f in CHAT_FIELDS:
        if isinstance(obj.get(f), list):
            return Layout("chat", (f,), _roles(obj[f]))
    if isinstance(obj.get("text"), str):
        return Layout("text", ("text",))
    for pair in PAIRS:
        if all(k in obj for k in pair):
            return Layout("fields", pair)
    return None


def _roles(turns: Any) -> tuple[str, str]:
    if isinstance(turns, list) and turns and isinstance(turns[0], dict):
        for keys in ROLE_KEYS:
            if keys[0] in turns[0]:
                return keys
    return ROLE_KEYS[0]


def turns(obj: dict[str, Any], lay: Layout) -> list[tuple[str, str]] | None:
    """(role, content) of each chat turn; None when the field is not a list of turns."""
    raw = obj.get(lay.fields[0])
    if not isinstance(raw, list):
        return None
    out = []
    for t in raw:
        if not isinstance(t, dict):
            return None
        role, content = t.get(lay.roles[0]), t.get(lay.roles[1])
        out.append((str(role).lower() if role is not None else "", content if isinstance(content, str) else ""))
    return out


def normalised(text: str) -> str:
    """What two copies of an example share: runs of white space are one space, ends trimmed."""
    return " ".join(text.split())


_DECODER = json.JSONDecoder()


def field_span(raw: str, name: str) -> tuple[int, int] | None:
    """0-based [start, end) of ``"name": value`` on the raw line (the key and its whole value)."""
    key = json.dumps(name)
    at = raw.find(key + ":")
    if at < 0:
        at = raw.find(key)
        if at < 0:
            return None
        return at, at + len(key)
    i = at + len(key) + 1
    while i < len(raw) and raw[i] in " \t":
        i += 1
    try:
        _, end = _DECODER.raw_decode(raw, i)
    except (ValueError, RecursionError):
        return at, len(raw)
    return at, end
