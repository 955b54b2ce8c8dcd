"""Read and judge every log under the given roots and print, per log, what the readers produced and the `check`
JSON: run once with the compiled scanners (_cscan, _cjsonl, _ctext, _cstdout) and once with TRAINLINT_PURE=1 by
tests/test_compiled_scanner.py.

    python tests/cscan_dump.py ROOT ... > dump.json

Per log: its format (and whether event files were read beside it), the check JSON of its report, and per series a
digest of every column the reader filled (steps, values, wall times, lines, records, byte offsets, files) with
the point count, plus the log's events and problems.
"""

from __future__ import annotations

import hashlib
import json
import sys

from trainlint.config import Config
from trainlint.core.accel import CJSONL, CSCAN, CSTDOUT, CTEXT, CTEXT_REASON, JSONL_REASON, REASON, STDOUT_REASON
from trainlint.judge import judge_path
from trainlint.output import check_json
from trainlint.runs import Companions, plan


def digest(s: object) -> str:
    h = hashlib.sha256()
    for name in ("steps", "values", "walls", "lines", "records", "offsets", "files"):
        h.update(name.encode())
        h.update(getattr(s, name).tobytes())
    return h.hexdigest()


def dump(roots: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    cfg = Config()
    for root in roots:
        companions = Companions()
        for item in plan(root, cfg).items:
            rep = judge_path(item.path, cfg, item.format, item.facts, companions)
            log = rep.log
            series = {} if log is None else {k: [len(s), digest(s)] for k, s in log.series.items()}
            events = [] if log is None else [
                [e.kind.value, e.step, e.line, e.record, e.offset, e.file, e.text, repr(e.detail)] for e in log.events]
            out[item.path] = {"format": item.format, "event_dirs": bool(item.facts.get("event_dirs")),
                              "report": check_json.report(rep), "series": series, "events": events}
    return out


if __name__ == "__main__":
    json.dump({"compiled": CSCAN is not None, "reason": REASON, "jsonl_compiled": CJSONL is not None,
               "jsonl_reason": JSONL_REASON, "text_compiled": CTEXT is not None, "text_reason": CTEXT_REASON,
               "stdout_compiled": CSTDOUT is not None, "stdout_reason": STDOUT_REASON,
               "logs": dump(sys.argv[1:])}, sys.stdout, sort_keys=True, default=str)
