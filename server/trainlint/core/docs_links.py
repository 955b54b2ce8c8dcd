"""Where a rule's documentation page is: the local docs/ of a checkout, else the project site."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

#: Used when trainlint runs from an installed wheel without the docs folder beside it.
PROJECT_DOCS_URL = "https://github.com/trainlint/trainlint/blob/main/docs/rules/"


@lru_cache(maxsize=1)
def _local_rules_dir() -> Path | None:
    override = os.environ.get("TRAINLINT_DOCS_DIR")
    if override:
        return Path(override)
    d = Path(__file__).resolve().parents[3] / "docs" / "rules"
    return d if d.is_dir() else None


def rule_url(rule_id: str) -> str:
    local = _local_rules_dir()
    if local is not None and (local / f"{rule_id}.md").is_file():
        return (local / f"{rule_id}.md").as_uri()
    return f"{PROJECT_DOCS_URL}{rule_id}.md"
