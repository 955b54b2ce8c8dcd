"""User-declared formats (``.trainlint.yaml`` ``formats:``): the in-house print the built-in readers do not know.

Each pattern is a regular expression with a group named ``step`` and one named group per metric
(``loss``, ``val_loss``, …; roles from the name tokens as everywhere). A line that matches gives one point per
metric group at that step, located on the group's span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.lines import split_lines
from ..core.model import Locator, LogFile, parse_number
from ..core.roles import RoleMap
from .base import FormatReader

MAX_MATCH_LINE = 4096  # a user pattern only sees the first 4 KB of a line: no pathological backtracking on huge ones


@dataclass(frozen=True)
class UserFormat:
    files: str                       # a glob, relative to the folder of the configuration
    patterns: tuple[re.Pattern[str], ...]
    base: str                        # that folder


class CustomReader(FormatReader):
    format = "custom"

    def __init__(self, log: LogFile, roles: RoleMap | None = None,
                 patterns: tuple[re.Pattern[str], ...] = ()) -> None:
        super().__init__(log, roles)
        self.patterns = patterns
        self.state = None
        self._locators = {(i, g): Locator(_group_only(p, g)) for i, p in enumerate(patterns)
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


def _group_only(pat: re.Pattern[str], group: str) -> str:
    """The user's pattern with ``group`` renamed ``v`` (the locator's group) and the others unnamed."""
    src = pat.pattern
    src = re.sub(r"\(\?P<" + re.escape(group) + r">", "(?P<v>", src)
    return re.sub(r"\(\?P<(?!v>)\w+>", "(?:", src)
