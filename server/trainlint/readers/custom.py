"""User-declared formats (``.trainlint.yaml`` ``formats:``): the in-house print the built-in readers do not know.

Each pattern is a regular expression with a group named ``step`` and one named group per metric
(``loss``, ``val_loss``, …; roles from the name tokens as everywhere). A line that matches gives one point per
metric group at that step, located on the group's span.

The patterns come from a repository someone cloned, so they run on RE2 (``google-re2``), whose matching time is
linear in the line: ``(?:x+)+y`` on 40 x's took minutes in Python's ``re`` and froze the server with it. What RE2
cannot express (backreferences, lookaround, possessive or atomic groups) is refused on its line of the YAML file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..core.lines import split_lines
from ..core.model import Locator, LogFile, _same_number, parse_number
from ..core.roles import RoleMap
from .base import FormatReader

MAX_MATCH_LINE = 4096  # a user pattern only sees the first 4 KB of a line: no pathological backtracking on huge ones


@dataclass(frozen=True)
class UserFormat:
    files: str                       # a glob, relative to the folder of the configuration
    patterns: tuple[Any, ...]       # compiled by compile_user_pattern (RE2)
    base: str                        # that folder


class CustomReader(FormatReader):
    format = "custom"

    def __init__(self, log: LogFile, roles: RoleMap | None = None,
                 patterns: tuple[Any, ...] = ()) -> None:
        super().__init__(log, roles)
        self.patterns = patterns
        self.state = None
        self._locators = {(i, g): LinearLocator(_group_only(p, g)) for i, p in enumerate(patterns)
                          for g in p.groupindex if g != "step"}

    def scan(self, text: str, first_line: int) -> None:
        for offset, line in enumerate(split_lines(text)):
            head = line[:MAX_MATCH_LINE]
            for i, pat in enumerate(self.patterns):
                m = pat.search(head)
                if m is None:
                    continue
                try:
                    step = float(m.group("step"))
                except (TypeError, ValueError):
                    continue
                for name, raw in m.groupdict().items():
                    if name == "step" or raw is None:
                        continue
                    try:
                        value = parse_number(raw)
                    except ValueError:
                        continue
                    s = self.series(name, locator=self._locators[(i, name)], step_basis="step")
                    s.append(step, value, first_line + offset)
                    self.log.facts["last_step"] = step
                break


class UnsupportedPattern(ValueError):
    """A valid Python regular expression that RE2 cannot run (so it cannot be run in linear time)."""


def compile_user_pattern(src: str) -> Any:
    """``src`` compiled by RE2. Raises ``re.error`` for a pattern that is not a regular expression at all (Python's
    message, which is what the user wrote against) and :class:`UnsupportedPattern` for one RE2 cannot express."""
    re.compile(src)
    return _re2(src)


@lru_cache(maxsize=256)
def _re2(src: str) -> Any:
    try:
        import re2
    except ImportError as e:  # a broken install: say so rather than fall back to an engine that can hang
        raise UnsupportedPattern(f"cannot be run in linear time: the google-re2 package is missing ({e})") from None
    opts = re2.Options()
    opts.log_errors = False  # RE2 would print every refused pattern on stderr
    try:
        return re2.compile(src, opts)
    except re2.error as e:
        why = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        raise UnsupportedPattern(f"cannot be run in linear time by RE2 ({why}); backreferences, lookahead, "
                                 "lookbehind and possessive or atomic groups are not supported") from None


@dataclass(frozen=True, slots=True)
class LinearLocator(Locator):
    """A locator built from a user's pattern: compiled and matched by RE2 like the pattern itself."""

    @property
    def pattern(self) -> Any:
        return _re2(self.source)

    def span(self, line: str, value: float | None = None) -> tuple[int, int] | None:
        pat = self.pattern
        group = pat.groupindex["v"]
        for m in pat.finditer(line[:MAX_MATCH_LINE]):
            start, end = m.span(group)
            if start >= 0 and (value is None or _same_number(m.group(group), value)):
                return start, end
        return None


def _group_only(pat: Any, group: str) -> str:
    """The user's pattern with ``group`` renamed ``v`` (the locator's group) and the others unnamed."""
    src = pat.pattern
    src = re.sub(r"\(\?P<" + re.escape(group) + r">", "(?P<v>", src)
    return re.sub(r"\(\?P<(?!v>)\w+>", "(?:", src)
