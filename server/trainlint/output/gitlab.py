"""``--output-format gitlab``: GitLab's Code Quality report (a JSON array; the ``codequality`` artifact), which
GitLab shows in the merge request and its diff.

Each entry has what GitLab requires: ``description``, ``check_name``, ``fingerprint`` (the same line-free one as
SARIF's), ``severity`` (FAIL ``major``, WARN ``minor``, NOT-CHECKED ``info``) and ``location.path`` with
``location.lines.begin`` (line 1 for a finding without a line, such as a record of an event file).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..core.findings import Level
from .ci_common import ci_path, shown

if TYPE_CHECKING:
    from ..core.report import Report

SEVERITY = {Level.FAIL: "major", Level.WARN: "minor", Level.NOT_CHECKED: "info"}


def document(reports: list[Report], base: str | None = None) -> list[dict[str, Any]]:
    out = []
    for _rep, f, fp in shown(reports):
        loc = f.location
        begin = loc.line if loc.line is not None else 1
        where = f" (record {loc.record})" if loc.record is not None else ""
        out.append({
            "type": "issue",
            "check_name": f.id,
            "description": f"{f.id} [{f.level.value}] {f.evidence.text}{where} — {f.message}",
            "categories": ["Bug Risk"],
            "severity": SEVERITY[f.level],
            # GitLab wants an MD5-like unique string; ours is the line-free fingerprint, hashed to 32 hex digits.
            "fingerprint": hashlib.md5(fp.encode(), usedforsecurity=False).hexdigest(),
            "location": {"path": ci_path(loc.path, base), "lines": {"begin": begin, "end": loc.end_line or begin}},
        })
    return out
