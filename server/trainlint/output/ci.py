"""The CI renderings by name, as one text each (the CLI prints it)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judge import Report


def render(fmt: str, reports: list[Report], base: str | None = None) -> str:
    if fmt == "github":
        from . import github

        return "\n".join(github.render(reports, base))
    if fmt == "gitlab":
        from . import gitlab

        return json.dumps(gitlab.document(reports, base), indent=2, allow_nan=False)
    if fmt == "junit":
        from . import junit

        return junit.document(reports, base)
    if fmt == "markdown":
        from . import markdown

        return "\n".join(markdown.render(reports, base))
    raise ValueError(f"unknown CI output format {fmt!r}")
