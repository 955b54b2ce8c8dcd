"""``trainlint preflight``: lint fine-tuning datasets before the run, each finding on its example's line.

One streamed pass per file (memory: a 16-byte hash per distinct example); evaluation files (``test``,
``eval``, ``valid``, ``dev`` in the name, or given with ``--eval``) are compared with the training files for
leakage. A local tokenizer (``tokenizer.json`` through ``tokenizers``, a SentencePiece ``.model`` through
``sentencepiece``; never a download) adds token counts and the tokenizer's own checks; without the library
or the file those checks are NOT-CHECKED with the reason and the install command, never FAIL.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

from .core.findings import Evidence, Finding, Measurement, Ratio, Related
from .core.fsio import open_regular
from .core.model import Location
from .core.report import Report
from .core.report import exit_code as report_exit_code
from .dataset_report import dataset_verdict, line_ends, tokenizer_not_checked
from .judge import READ_ERRORS, read_failure
from .readers.base import MAX_DOCUMENT
from .readers.dataset import examples
from .readers.speech import layout_of as speech_layout
from .rules.dataset import (
    TL_PRE_NO_EOS,
    TL_PRE_NO_EXAMPLES,
    TL_PRE_NO_PAD,
    TL_PRE_PAD_IS_EOS,
    TL_PRE_TOO_LONG,
    TP_PRE_NO_EOS_APPEND,
)
from .rules.dataset_checks import MAX_PER_RULE, DatasetCheck, leakage, oov_finding

_EVAL_NAME = re.compile(r"(?:^|[_.\-/])(?:test|eval|evaluation|valid|validation|val|dev|heldout)(?:[_.\-]|$)", re.I)
INSTALL = {"tokenizers": "pip install tokenizers (or pip install 'trainlint[preflight]')",
           "sentencepiece": "pip install sentencepiece (or pip install 'trainlint[preflight]')"}
EOS_SAMPLE = 100  # examples whose encoding is inspected for an appended EOS


def is_eval_file(path: str) -> bool:
    return bool(_EVAL_NAME.search(os.path.basename(path)))


# -- tokenizers -------------------------------------------------------------------------------------
class Tokenizer:
    """What the checks need from either library: ids of text and the special tokens."""

    def __init__(self, path: str, encode: Callable[[str], list[int]], eos: int | None, pad: int | None,
                 unk: int | None, piece: Callable[[int], str], appends_eos_known: bool = True) -> None:
        self.path, self.encode, self.eos, self.pad, self.unk, self.piece = path, encode, eos, pad, unk, piece
        self.appends_eos_known = appends_eos_known


def load_tokenizer(path: str) -> Tokenizer | str:
    """The tokenizer at ``path``, or why it cannot be used (a sentence with the install command)."""
    why = _not_readable(path)
    if why is not None:
        return why
    if path.endswith(".model"):
        try:
            import sentencepiece as spm
        except ImportError:
            return f"reading a SentencePiece model needs the sentencepiece library: {INSTALL['sentencepiece']}"
        try:
            sp = spm.SentencePieceProcessor(model_file=path)
        except (OSError, RuntimeError) as e:
            return f"{path} is not a SentencePiece model ({e})"
        ids = lambda i: i if i >= 0 else None  # noqa: E731 - SentencePiece says -1 for "none"
        return Tokenizer(path, lambda t: sp.encode(t), ids(sp.eos_id()), ids(sp.pad_id()), ids(sp.unk_id()),
                         sp.id_to_piece, appends_eos_known=False)
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        return f"reading a tokenizer.json needs the tokenizers library: {INSTALL['tokenizers']}"
    try:
        tk = HFTokenizer.from_file(path)
    except Exception as e:  # the library raises its own Exception type for a bad file
        return f"{path} is not a tokenizer.json the tokenizers library can read ({str(e)[:200]})"
    config = _tokenizer_config(path)
    eos = _special(tk, config.get("eos_token"))
    pad = _special(tk, config.get("pad_token"))
    unk_name = config.get("unk_token") or getattr(tk.model, "unk_token", None)
    unk = _special(tk, unk_name)
    return Tokenizer(path, lambda t: tk.encode(t).ids, eos, pad, unk, lambda i: tk.id_to_token(i) or str(i))


MAX_TOKENIZER_BYTES = MAX_DOCUMENT  # a tokenizer.json is read whole, as a JSON document is (a 3 GB one: 21 s, 3.2 GB)


def _not_readable(path: str) -> str | None:
    """Why the tokenizer file cannot be read (absent, a FIFO or device, too large), else None. Checked on the
    opened descriptor, never blocking: a FIFO named tokenizer.json would hang the libraries' own open."""
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        return (f"the tokenizer {path} does not exist (a local tokenizer.json or SentencePiece .model; trainlint "
                "never downloads one)")
    except OSError as e:
        return f"the tokenizer {path} cannot be read: {e.strerror or e}"
    if size > MAX_TOKENIZER_BYTES:
        return (f"the tokenizer {path} is {size} bytes, over the {MAX_TOKENIZER_BYTES >> 20} MB trainlint reads "
                "whole; it was not read")
    return None


def _tokenizer_config(path: str) -> dict[str, Any]:
    """tokenizer_config.json beside tokenizer.json (where HF keeps eos/pad); {} when absent or unreadable."""
    try:  # never blocking on a FIFO, never more than a configuration's worth
        with open_regular(os.path.join(os.path.dirname(path), "tokenizer_config.json")) as f:
            raw = f.read((16 << 20) + 1)
        doc = json.loads(raw) if len(raw) <= 16 << 20 else {}
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _special(tk: Any, token: Any) -> int | None:
    if isinstance(token, dict):  # {"content": "</s>", ...}
        token = token.get("content")
    if not isinstance(token, str) or not token:
        return None
    return tk.token_to_id(token)


class TokenCheck:
    """Token counts, lengths and unknown tokens, accumulated as examples stream by."""

    def __init__(self, tok: Tokenizer, max_len: int | None) -> None:
        self.tok, self.max_len = tok, max_len
        self.tokens = self.unknown = self.examples = 0
        self.longest: tuple[int, int] = (0, 0)   # (tokens, line)
        self.over: list[tuple[int, int]] = []    # (line, tokens), the first MAX_PER_RULE
        self.over_count = 0
        self.worst_unk: tuple[int, int, int] | None = None  # (line, unknown, tokens)
        self.eos_seen = self.eos_missing = 0
        self.first_missing: int | None = None

    def __call__(self, line: int, text: str) -> None:
        ids = self.tok.encode(text)
        n = len(ids)
        self.examples += 1
        self.tokens += n
        if n > self.longest[0]:
            self.longest = (n, line)
        if self.max_len is not None and n > self.max_len:
            self.over_count += 1
            if len(self.over) < MAX_PER_RULE:
                self.over.append((line, n))
        if self.tok.unk is not None:
            u = ids.count(self.tok.unk)
            self.unknown += u
            if u and (self.worst_unk is None or u > self.worst_unk[1]):
                self.worst_unk = (line, u, n)
        if self.tok.eos is not None and self.examples <= EOS_SAMPLE and n:
            if ids[-1] == self.tok.eos:
                self.eos_seen += 1
            else:
                self.eos_missing += 1
                if self.first_missing is None:
                    self.first_missing = line

    def findings(self, path: str) -> list[Finding]:
        tok, out = self.tok, []
        at_tok = Location(tok.path, None)
        first = Location(path, 1, 1, 1, None)
        if tok.eos is None:
            out.append(Finding(TL_PRE_NO_EOS.id, TL_PRE_NO_EOS.level,
                               "Without an end-of-sequence token the model is never shown where a reply ends, and "
                               "generation runs on to the length limit.",
                               Evidence({"tokenizer": os.path.basename(tok.path)}, "{tokenizer} declares no EOS token"),
                               first, related=[Related("tokenizer", at_tok, "the tokenizer")]))
        elif tok.appends_eos_known and self.eos_missing and not self.eos_seen:
            values = {"missing": self.eos_missing, "sampled": self.eos_missing + self.eos_seen,
                      "eos": tok.piece(tok.eos), "line": self.first_missing or 1}
            out.append(Finding(TP_PRE_NO_EOS_APPEND.id, TP_PRE_NO_EOS_APPEND.level,
                               "The tokenizer does not append its EOS token and the texts do not end with it: unless "
                               "the training code adds it, the model never learns to stop.",
                               Evidence(values, "{missing} of {sampled} encoded examples do not end with {eos}"),
                               Location(path, values["line"], 1, values["line"], None)))
        if tok.pad is None:
            out.append(Finding(TL_PRE_NO_PAD.id, TL_PRE_NO_PAD.level,
                               "Batches of unequal length need a pad token; trainers then set one (often the EOS "
                               "token, see TL-PRE-PAD-IS-EOS) or fail.",
                               Evidence({"tokenizer": os.path.basename(tok.path)}, "{tokenizer} declares no pad token"),
                               first))
        elif tok.eos is not None and tok.pad == tok.eos:
            out.append(Finding(TL_PRE_PAD_IS_EOS.id, TL_PRE_PAD_IS_EOS.level,
                               "When padding is masked out of the loss by token id, every EOS is masked with it: the "
                               "model may never learn to stop.",
                               Evidence({"pad": tok.piece(tok.pad), "id": tok.pad}, "pad and EOS are both {pad} "
                                                                                      "(id {id})"), first))
        for line, n in self.over:
            longest = line == self.longest[1]
            values = {"line": line, "tokens": n, "max_len": self.max_len, "count": self.over_count,
                      "examples": self.examples}
            tail = " — the longest" if longest else ""
            out.append(Finding(TL_PRE_TOO_LONG.id, TL_PRE_TOO_LONG.level,
                               "Longer than the context: the trainer truncates it (the reply, at the end, is cut "
                               "first) or drops it.",
                               Evidence(values, "line {line}: {tokens} tokens, over --max-len {max_len} ({count} of "
                                                "{examples} examples are over)" + tail),
                               Location(path, line, 1, line, None)))
        unk = tok.piece(tok.unk) if tok.unk is not None else "unk"
        f = oov_finding(path, self.unknown, self.tokens, self.worst_unk, unk)
        if f is not None:
            out.append(f)
        return out

    def measurement(self, path: str) -> Measurement:
        values: dict[str, Any] = {"examples": self.examples, "tokens": self.tokens, "longest": self.longest[0],
                                  "longest_line": self.longest[1]}
        if self.examples:
            values["mean"] = Ratio(self.tokens / self.examples)
        return Measurement("tokenizer", path, values, f"{self.examples} examples, {self.tokens} tokens, the longest "
                                                       f"{self.longest[0]} (line {self.longest[1]})")


# -- the door ---------------------------------------------------------------------------------------
def preflight(paths: list[str], tokenizer: str | None = None, max_len: int | None = None,
              text_field: str | None = None, chat_field: str | None = None,
              evals: list[str] | None = None, thresholds: Any = None) -> list[Report]:
    """One report per dataset file (evaluation files compared with the training files for leakage)."""
    tok = load_tokenizer(tokenizer) if tokenizer else None
    checks: dict[str, DatasetCheck] = {}
    token_checks: dict[str, TokenCheck] = {}
    reports: dict[str, Report] = {}
    everything = [*paths, *(evals or [])]
    eval_set = set(evals or []) | {p for p in everything if is_eval_file(p)}
    for path in everything:
        if path in checks or path in reports:
            continue
        speech = speech_layout(path)
        if speech is not None:  # a speech/TTS manifest (by its layout): its own checks
            from .speech_preflight import speech_report  # start-up: only a speech corpus needs it

            reports[path] = speech_report(path, speech, tok if isinstance(tok, Tokenizer) else None,
                                          tok if isinstance(tok, str) else None, thresholds)
            continue
        if isinstance(tok, Tokenizer):
            token_checks[path] = TokenCheck(tok, max_len)
        dc = DatasetCheck(path, text_field, chat_field, keep_prompts=bool(eval_set) and len(everything) > 1,
                          on_text=token_checks.get(path))
        try:
            dc.feed(examples(path))
        except READ_ERRORS as e:
            reports[path] = read_failure(path, "dataset", e)
            continue
        dc.finish()
        checks[path] = dc
    trains = [c for p, c in checks.items() if p not in eval_set]
    for path, dc in checks.items():
        findings = list(dc.findings)
        if path in eval_set and trains:
            findings += leakage(dc, trains)
        if isinstance(tok, str):
            findings.append(tokenizer_not_checked(path, tok))
        elif path in token_checks:
            findings += token_checks[path].findings(path)
        if dc.examples == 0:
            findings.append(Finding(TL_PRE_NO_EXAMPLES.id, TL_PRE_NO_EXAMPLES.level,
                                    "No line of the file could be read as an example, so nothing else was checked.",
                                    Evidence({"lines": dc.lines}, "{lines} non-blank lines, no example"),
                                    Location(path, None)))
        line_ends(path, findings)
        rep = Report(path, "dataset", dataset_verdict(findings), findings,
                     ran=["dataset-lines", "dataset-text", "dataset-chat", "dataset-duplicates"])
        layout = dc.layout.describe() if dc.layout else "unknown"
        rep.measurements.append(Measurement(
            "dataset", path, {"lines": dc.lines, "examples": dc.examples, "distinct": len(dc.seen), "layout": layout},
            f"{dc.examples} examples in {dc.lines} lines ({len(dc.seen)} distinct), layout {layout}"))
        if path in token_checks:
            rep.measurements.append(token_checks[path].measurement(path))
        reports[path] = rep
    return [reports[p] for p in dict.fromkeys(everything) if p in reports]


def exit_code(reports: list[Report]) -> int:
    """1 for a FAIL; else 2 when a check could not run (NOT-CHECKED); else 0 (WARN does not fail a build)."""
    return report_exit_code({f.level for r in reports for f in r.findings} | {r.verdict for r in reports})
