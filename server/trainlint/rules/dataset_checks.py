"""The checks of ``trainlint preflight`` over a dataset's examples: each finding on the line of its example.

The checks stream: one pass over a file keeps a hash per distinct example (what finding duplicates and
leakage needs) and the few examples a finding points at. Tokenizer checks need an optional library and a
local tokenizer; without either they are NOT-CHECKED with the reason and the install command, never FAIL.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from ..core.model import Location
from ..readers.dataset import (
    ASSISTANT,
    OPTIONAL,
    PREFERENCE,
    SYSTEM,
    USER,
    Example,
    Layout,
    chat_turns,
    field_span,
    layout_of,
    normalised,
    turns,
)
from .base import Evidence, Finding, Ratio, Related, Rule
from .dataset import (
    TL_PRE_CHAT,
    TL_PRE_DUPLICATE,
    TL_PRE_EMPTY,
    TL_PRE_LEAKAGE,
    TL_PRE_NO_TEXT,
    TP_PRE_MALFORMED,
    TP_TOK_HIGH_OOV,
)
from .thresholds import Thresholds

TOOL = {"tool", "function", "ipython"}  # the answer to an assistant's tool call

MAX_PER_RULE = 50      # findings of one rule in one file; the evidence of each counts them all


def digest(text: str) -> bytes:
    return hashlib.blake2b(normalised(text).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class DatasetCheck:
    """One pass over one file's examples: the line rules as they stream, duplicates by hash."""

    def __init__(self, path: str, text_field: str | None = None, chat_field: str | None = None,
                 keep_prompts: bool = True, on_text: Callable[[int, str], None] | None = None) -> None:
        self.path, self.text_field, self.chat_field = path, text_field, chat_field
        self.keep_prompts = keep_prompts  # prompts are kept for leakage: only when an evaluation file is linted too
        self.on_text = on_text            # the tokenizer's checks, when asked for
        self.layout: Layout | None = None
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}
        self.examples = 0       # lines read as examples
        self.lines = 0          # non-blank lines
        self.seen: dict[bytes, int] = {}   # example hash -> first line
        self.prompts: dict[bytes, int] = {}  # prompt hash -> first line (what leakage compares)

    # -- streaming ---------------------------------------------------------------------------
    def feed(self, items: Iterable[Example]) -> None:
        for ex in items:
            self.lines += 1
            if ex.problem is not None:
                values: dict[str, Any] = {"problem": ex.problem}
                if ex.column is not None:
                    values["column"] = ex.column
                self._flag(TP_PRE_MALFORMED, ex, values,
                           "line {line}: {problem}" + (" at column {column}" if ex.column is not None else ""),
                           "The line cannot be read as one example; most loaders stop at it or drop it silently.")
                continue
            obj = ex.obj or {}
            if self.layout is None:
                self.layout = layout_of(obj, self.text_field, self.chat_field)
                if self.layout is None:
                    self._flag(TL_PRE_NO_TEXT, ex, {"keys": ", ".join(list(obj)[:8]) or "none"},
                               "line {line}: no text or chat field (keys: {keys})",
                               "No field this example could be trained on was found; name it with --text-field or "
                               "--chat-field if it has another name.")
                    continue
            self._example(ex, obj, self.layout)

    def _example(self, ex: Example, obj: dict[str, Any], lay: Layout) -> None:
        if lay.kind == "chat":
            ts = turns(obj, lay)
            if ts is None:
                self._flag(TL_PRE_NO_TEXT, ex, {"field": lay.fields[0]},
                           "line {line}: `{field}` is not a list of turns",
                           "The chat field is missing or is not a list of role/content turns.", field=lay.fields[0])
                return
            self.examples += 1
            self._chat(ex, ts, lay)
            text = "\n".join(f"{r}: {c}" for r, c in ts)
            prompt = "\n".join(c for r, c in ts if r in USER)
        else:
            missing = [f for f in lay.fields if f not in obj and f not in OPTIONAL]
            if missing:
                self._flag(TL_PRE_NO_TEXT, ex, {"field": missing[0]}, "line {line}: no `{field}` field",
                           "The example lacks a field the others have; loaders raise a KeyError or skip it.")
                return
            values = [obj.get(f) for f in lay.fields]
            if set(lay.fields) >= PREFERENCE:  # TRL: each may be a list of chat turns
                values = [_turns_text(v) if isinstance(v, list) else v for v in values]
            bad = [f for f, v in zip(lay.fields, values, strict=True) if v is not None and not isinstance(v, str)]
            if bad:
                self._flag(TL_PRE_NO_TEXT, ex, {"field": bad[0], "type": type(obj[bad[0]]).__name__},
                           "line {line}: `{field}` is {type}, not text", "A text field holds something else.",
                           field=bad[0])
                return
            self.examples += 1
            parts = [v or "" for v in values]
            empty = [f for f, v in zip(lay.fields, parts, strict=True) if not _visible(v) and f not in OPTIONAL]
            if empty:
                self._flag(TL_PRE_EMPTY, ex, {"field": empty[0]}, "line {line}: `{field}` is empty or white space",
                           "An empty text trains nothing (or teaches the model to answer with nothing).",
                           field=empty[0])
            text = "\n".join(parts)
            if set(lay.fields) >= PREFERENCE:
                prompt = parts[0] if lay.fields[0] == "prompt" else ""
            else:
                prompt = "\n".join(parts[:-1]) if len(parts) > 1 else text
        h = digest(text)
        first = self.seen.get(h)
        if first is None:
            self.seen[h] = ex.line
        elif text.strip():
            f = self._flag(TL_PRE_DUPLICATE, ex, {"first": first}, "line {line} repeats line {first}",
                           "The same example (white space aside) occurs more than once: it is weighted double, "
                           "and a split of the file may put one copy on each side.")
            if f is not None:
                f.related.append(Related("first-occurrence", Location(self.path, first), f"first at line {first}"))
        if self.keep_prompts and prompt.strip():
            self.prompts.setdefault(digest(prompt), ex.line)
        if self.on_text is not None:
            self.on_text(ex.line, text)

    def _chat(self, ex: Example, ts: list[tuple[str, str]], lay: Layout) -> None:
        roles = [r for r, _ in ts]
        talk = [i for i, r in enumerate(roles) if r in USER or r in ASSISTANT]  # tool turns are neither
        problem = None
        if not any(r in ASSISTANT for r in roles):
            problem = "no assistant turn"
        elif talk and any(r in SYSTEM for r in roles[talk[0]:]):
            problem = "a system turn after the conversation started"
        elif talk and roles[talk[0]] not in USER:
            problem = f"the first turn after the system prompt is `{roles[talk[0]]}`, not the user"
        else:
            for a, b in itertools.pairwise(talk):
                answered = any(r in TOOL for r in roles[a + 1:b])  # tool_calls, the tool's answer, the reply
                if (roles[a] in USER) == (roles[b] in USER) and not (roles[b] in ASSISTANT and answered):
                    problem = f"two `{roles[b]}` turns in a row (turns {a + 1} and {b + 1})"
                    break
        if problem is None:
            empty = [i for i, (r, c) in enumerate(ts) if r in ASSISTANT and not _visible(c)]
            if empty:
                problem = f"assistant turn {empty[0] + 1} is empty"
        if problem is not None:
            self._flag(TL_PRE_CHAT, ex, {"problem": problem, "turns": len(ts)},
                       "line {line}: {problem} ({turns} turns)",
                       "The turns do not make a conversation a reply can be trained on (chat templates raise on "
                       "roles out of order; a missing or empty reply trains nothing).", field=lay.fields[0])

    def _flag(self, rule: Rule, ex: Example, values: dict[str, Any], template: str, message: str,
              field: str | None = None) -> Finding | None:
        n = self.counts[rule.id] = self.counts.get(rule.id, 0) + 1
        if n > MAX_PER_RULE:
            return None
        span = field_span(ex.raw, field) if field and ex.raw else None
        loc = (Location(self.path, ex.line, span[0] + 1, ex.line, span[1] + 1) if span
               else Location(self.path, ex.line, 1, ex.line, len(ex.raw) + 1 if ex.raw else None))
        f = Finding(rule.id, rule.level, message, Evidence({"line": ex.line, **values}, template), loc)
        self.findings.append(f)
        return f

    def finish(self) -> None:
        """The counts of each rule into its findings' evidence (a file may hold thousands of each)."""
        for f in self.findings:
            total = self.counts.get(f.id, 0)
            if total > 1:
                f.evidence.values["count"] = total
                f.evidence.template += " (one of {count})"


def _visible(text: str) -> bool:
    """Whether a text holds something to train on (white space and nothing else does not)."""
    return bool(text.strip())


def _turns_text(raw: list[Any]) -> str | list[Any]:
    """A TRL preference field given as chat turns, as one text ("role: content" per turn); the list itself
    when it is not turns (reported as not text)."""
    ts = chat_turns(raw)
    return raw if ts is None else "\n".join(f"{r}: {c}" if c.strip() else "" for r, c in ts).strip()


def leakage(evals: DatasetCheck, trains: list[DatasetCheck]) -> list[Finding]:
    """Examples of an evaluation file whose prompt also occurs in a training file (normalised hash)."""
    out: list[Finding] = []
    where = {}
    for tr in trains:
        for h, line in tr.prompts.items():
            where.setdefault(h, (tr.path, line))
    hits = [(line, where[h]) for h, line in evals.prompts.items() if h in where]
    hits.sort()
    for line, (tpath, tline) in hits[:MAX_PER_RULE]:
        values = {"line": line, "train_line": tline, "count": len(hits), "examples": len(evals.prompts)}
        f = Finding(TL_PRE_LEAKAGE.id, TL_PRE_LEAKAGE.level,
                    "The evaluation example's prompt is also in the training data (white space aside): a score on "
                    "it measures recall of training data, not generalisation.",
                    Evidence(values, "line {line}: the prompt is line {train_line} of the training file ({count} of "
                                     "{examples} evaluation prompts are)"),
                    Location(evals.path, line, 1, line, None))
        f.related.append(Related("training-copy", Location(tpath, tline), f"the same prompt in {tpath}"))
        out.append(f)
    return out


def oov_finding(path: str, unknown: int, tokens: int, worst: tuple[int, int, int] | None, unk: str,
                max_oov_rate: float = Thresholds.max_oov_rate) -> Finding | None:
    """TP-TOK-HIGH-OOV when more than 0.1% of all tokens are the unknown token; on the worst example's line."""
    if tokens == 0 or unknown / tokens <= max_oov_rate or worst is None:
        return None
    line, w_unk, w_tok = worst
    values = {"rate": Ratio(unknown / tokens * 100), "unknown": unknown, "tokens": tokens, "line": line,
              "line_unknown": w_unk, "line_tokens": w_tok, "unk": unk, "limit": Ratio(max_oov_rate * 100)}
    return Finding(TP_TOK_HIGH_OOV.id, TP_TOK_HIGH_OOV.level,
                   "Text the tokenizer cannot represent becomes the unknown token, and the model learns nothing from "
                   "it: the tokenizer may not match this data (language, script, normalisation).",
                   Evidence(values, "{unknown} of {tokens} tokens are {unk} ({rate}%, over {limit}%); line {line} "
                                    "has {line_unknown} of {line_tokens}"),
                   Location(path, line, 1, line, None))
