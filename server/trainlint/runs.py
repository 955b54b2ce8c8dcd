"""From a path to the logs to judge, each with the run-level facts that bear on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .discovery import discover


@dataclass
class Item:
    path: str
    format: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    items: list[Item] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)

    @property
    def considered(self) -> int:
        return len(self.items) + len(self.skipped) + len(self.unreadable)


def plan(root: str) -> Plan:
    d = discover(root)
    return Plan([Item(f.path, f.format) for f in d.found], d.skipped, d.unreadable)
