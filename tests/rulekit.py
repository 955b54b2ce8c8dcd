"""Helpers for rule tests: small synthetic logs, and the evidence-faithfulness check."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from trainlint.core.findings import Finding
from trainlint.core.report import Report
from trainlint.judge import judge_path

_NUM = re.compile(r"(?<![\w`.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?(?=x\b|[^\w`]|$)|\binf\b|\bNaN\b")


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """One JSON object per line, exactly as a trainer would write them (NaN as the NaN token)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def judge(path: Path | str, live: bool = False, **kw: Any) -> Report:
    """Judge as ``check`` does (the bytes alone, a stopped run), or, with ``live``, as a run still being written,
    which rules that need progress do not judge yet."""
    return judge_path(str(path), live=live, **kw)


def only(rep: Report, rule_id: str) -> Finding:
    found = [f for f in rep.findings if f.id == rule_id]
    assert len(found) == 1, [(f.id, f.evidence.text) for f in rep.findings]
    return found[0]


def ids(rep: Report) -> set[str]:
    """The rules that fired, with those folded into another finding's evidence (one problem, one finding)."""
    out = {f.id for f in rep.findings}
    for f in rep.findings:
        folded = f.evidence.values.get("folded_rules")
        if isinstance(folded, str):
            out.update(folded.split(", "))
    return out


def shown(rep: Report) -> set[str]:
    """The rules of the findings a user sees (folded ones are in another finding's evidence)."""
    return {f.id for f in rep.findings}


def _numbers(values: Any) -> list[float]:
    out: list[float] = []
    if isinstance(values, dict):
        for v in values.values():
            out.extend(_numbers(v))
    elif isinstance(values, list | tuple):
        for v in values:
            out.extend(_numbers(v))
    elif isinstance(values, int | float) and not isinstance(values, bool):
        out.append(float(values))
    return out


def _sig(token: str) -> int:
    mant = token.lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0")
    return max(1, len(mant))


def faithful(f: Finding) -> None:
    """Every number printed in the evidence text is a measured value of the finding, rounded."""
    text = re.sub(r"`[^`]*`", "", f.evidence.text)  # series names may hold digits (loss_0)
    values = _numbers(f.evidence.values)
    for token in _NUM.findall(text):
        t = token.lower()
        if t in ("nan",):
            assert any(math.isnan(v) for v in values), (token, f.evidence.text)
            continue
        if t in ("inf", "-inf"):
            assert any(math.isinf(v) for v in values), (token, f.evidence.text)
            continue
        x = float(token)
        sig = _sig(token)
        ok = any(math.isfinite(v) and (v == x or float(f"{v:.{sig}g}") == x) for v in values)
        assert ok, f"{token!r} in {f.evidence.text!r} is none of {values}"
