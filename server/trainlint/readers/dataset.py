"""Fine-tuning datasets as JSON lines: one example per line, streamed, each with where its text sits.

A dataset is not a training log: no step, no metric, a text (or a chat) per line. The layout is taken from
the first object (or named by the user): a chat list (``messages``, ``conversations``; OpenAI's
role/content or ShareGPT's from/value), a ``text`` field, or a prompt/response pair (prompt/completion,
instruction/input/output with ``input`` optional, Dolly's instruction/context/response, question/answer,
query/response, input/output), or TRL preference data (prompt/chosen/rejected, or chosen/rejected alone; each a
string or a list of chat turns). A chat turn's content may be OpenAI's list of parts (``{"type": "text", ...}``,
images); an assistant turn may hold only ``tool_calls``, answered by a ``tool`` turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core.fsio import open_regular
from ..core.lines import split_lines

CHAT_FIELDS = ("messages", "conversations", "conversation")
PAIRS = (("prompt", "chosen", "rejected"), ("chosen", "rejected"), ("prompt", "completion"),
         ("instruction", "input", "output"), ("instruction", "context", "response"), ("instruction", "output"),
         ("instruction", "response"), ("question", "answer"), ("query", "response"), ("input", "output"),
         ("prompt", "response"))
OPTIONAL = {"input", "context"}  # the docs of Alpaca and Dolly: may be absent or empty
PREFERENCE = {"chosen", "rejected"}  # TRL preference data: the prompt is what precedes them
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
            for text in split_lines(_decode(head)):
                if text.strip():
                    yield line_no, text
                line_no += 1
        if pending.strip() and not skipping:
            yield line_no, _decode(pending)


_ESCAPED = re.compile("[\udc80-\udcff]")


def _decode(data: bytes) -> str:
    """UTF-8 text; bytes that are not UTF-8 are kept as lone surrogates (``surrogateescape``), which no valid
    text holds, so the line they are on is reported (loaders raise UnicodeDecodeError on it)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def examples(path: str) -> Iterator[Example]:
    for n, text in lines(path):
        if text == "\x00too-long":
            yield Example(n, problem=f"longer than {MAX_LINE >> 20} MB; not read")
            continue
        bad = _ESCAPED.search(text)
        if bad is not None:
            shown = _ESCAPED.sub("\ufffd", text)
            yield Example(n, shown, problem="holds bytes that are not valid UTF-8 (json and datasets loaders raise "
                                            "UnicodeDecodeError)", column=bad.start() + 1)
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
        if all(k in obj or (k in OPTIONAL and k != pair[0]) for k in pair) and not (
                pair == ("input", "output") and "instruction" in obj):
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
    return chat_turns(raw, lay.roles)


def chat_turns(raw: Any, roles: tuple[str, str] = ("role", "content")) -> list[tuple[str, str]] | None:
    """(role, text) of each turn of a list of turns; None when it is not one. A content list of parts is its text
    parts (an image part is named by its JSON: two lines asking about different images are not duplicates); an
    assistant turn's ``tool_calls`` (or ``function_call``) are part of its text (it is not empty)."""
    if not isinstance(raw, list):
        return None
    out = []
    for t in raw:
        if not isinstance(t, dict):
            return None
        role, content = t.get(roles[0]), t.get(roles[1])
        text = content_text(content)
        calls = t.get("tool_calls") or t.get("function_call")
        if calls:
            text = (text + "\n" if text.strip() else "") + json.dumps(calls, sort_keys=True)
        out.append((str(role).lower() if role is not None else "", text))
    return out


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append("\x00" + json.dumps(part, sort_keys=True))  # an image, audio: named, not text
        return "\n".join(parts)
    return ""


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
