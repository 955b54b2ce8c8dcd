"""``--output-format junit``: a JUnit XML report for CI services that show test results (GitLab's
``artifacts:reports:junit``, Jenkins, Azure, the GitHub test-report actions).

One ``<testsuite>`` per judged log (its name is the path), one ``<testcase>`` per finding trainlint shows:
FAIL is a ``<failure>``, NOT-CHECKED is ``<skipped>`` with the reason, WARN passes (a WARN does not fail a check)
with the evidence in ``<system-out>``, and a log that PASSed has its TP-PASS case, so no suite is empty. The XML is
written by the standard library's ElementTree (escaping included).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from ..core.findings import Level
from .ci_common import SHOWN, ci_path

if TYPE_CHECKING:
    from ..core.report import Report


def _where(f, base: str | None) -> str:  # type: ignore[no-untyped-def]
    loc = f.location
    p = ci_path(loc.path, base)
    if loc.record is not None:
        return f"{p}#record={loc.record}"
    return p if loc.line is None else f"{p}:{loc.line}:{loc.column or 1}"


def document(reports: list[Report], base: str | None = None) -> str:
    root = ET.Element("testsuites", name="trainlint")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for rep in reports:
        path = ci_path(rep.path, base)
        cases = [f for f in rep.findings if f.level in SHOWN or (f.level == Level.PASS and f.id == "TP-PASS")]
        counts = {"tests": len(cases), "failures": sum(f.level == Level.FAIL for f in cases), "errors": 0,
                  "skipped": sum(f.level == Level.NOT_CHECKED for f in cases)}
        suite = ET.SubElement(root, "testsuite", name=path, **{k: str(v) for k, v in counts.items()})
        for k, v in counts.items():
            totals[k] += v
        for f in cases:
            case = ET.SubElement(suite, "testcase", classname=path, name=f"{f.id} {f.series or ''}".strip(),
                                 file=ci_path(f.location.path, base))
            if f.location.line is not None:
                case.set("line", str(f.location.line))
            text = f"{_where(f, base)}: {f.id} [{f.level.value}] {f.evidence.text}\n{f.message}"
            if f.level == Level.FAIL:
                ET.SubElement(case, "failure", message=f.evidence.text, type=f.id).text = text
            elif f.level == Level.NOT_CHECKED:
                ET.SubElement(case, "skipped", message=f.evidence.text).text = text
            else:
                ET.SubElement(case, "system-out").text = text
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
