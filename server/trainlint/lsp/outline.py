"""Code lens (the file's verdict at its top) and document symbols (an outline of the log)."""

from __future__ import annotations

from lsprotocol import types as t

from ..core.findings import Level
from ..core.model import EventKind, LogFile
from ..core.values import fmt_step
from .workspace import Tracked

_SYMBOL_KIND = {
    EventKind.EPOCH: t.SymbolKind.Namespace, EventKind.EVALUATION: t.SymbolKind.Event,
    EventKind.CHECKPOINT: t.SymbolKind.File, EventKind.BEST_MODEL: t.SymbolKind.Constant,
    EventKind.INTERRUPTED: t.SymbolKind.Event, EventKind.TRACEBACK: t.SymbolKind.Event,
    EventKind.END_OF_RUN: t.SymbolKind.Event, EventKind.RESUME: t.SymbolKind.Event,
}


def steps_covered(log: LogFile) -> str:
    lo = hi = None
    for s in log.series.values():
        if len(s):
            lo = s.steps[0] if lo is None else min(lo, s.steps[0])
            hi = max(s.steps) if hi is None else max(hi, max(s.steps))
    return "no steps" if lo is None else f"steps {fmt_step(lo)}–{fmt_step(hi)}"


def code_lenses(tr: Tracked) -> list[t.CodeLens]:
    rep = tr.report
    if rep is None:
        return []
    top = t.Range(t.Position(0, 0), t.Position(0, 0))
    counts = {}
    for f in rep.findings:
        if f.level in (Level.FAIL, Level.WARN, Level.INFO):
            counts[f.level.value] = counts.get(f.level.value, 0) + 1
    found = ", ".join(f"{n} {lv}" for lv, n in counts.items()) or "no findings"
    covered = steps_covered(tr.log) if tr.log is not None else (rep.error or "not read")
    lenses = [t.CodeLens(top, t.Command(f"trainlint: {rep.verdict.value} — {found} · {covered}", ""))]
    ran = ", ".join(rep.ran) or "none"
    lenses.append(t.CodeLens(top, t.Command(f"ran: {ran}", "")))
    if rep.skipped:
        skipped = "; ".join(f"{k} ({v.reason.value}: {v.detail})" for k, v in rep.skipped.items())
        lenses.append(t.CodeLens(top, t.Command(f"skipped: {skipped}", "")))
    return lenses


def symbols(tr: Tracked) -> list[t.DocumentSymbol]:
    log = tr.log
    if log is None:
        return []
    out: list[t.DocumentSymbol] = []
    epoch: t.DocumentSymbol | None = None
    for e in sorted((e for e in log.events if e.line is not None), key=lambda e: e.line or 0):
        line0 = (e.line or 1) - 1
        rng = t.Range(t.Position(line0, 0), t.Position(line0, 0))
        name = f"{e.kind.value} at step {fmt_step(e.step)}" if e.step is not None else e.kind.value
        if e.kind == EventKind.EPOCH:
            name = f"epoch {e.detail.get('epoch', '?')}/{e.detail.get('of', '?')} (from step {fmt_step(e.step)})"
        sym = t.DocumentSymbol(name=name, kind=_SYMBOL_KIND.get(e.kind, t.SymbolKind.Event), range=rng,
                               selection_range=rng, detail=e.text[:120], children=[])
        if e.kind == EventKind.EPOCH:
            out.append(sym)
            epoch = sym
        elif epoch is not None:
            epoch.children.append(sym)  # type: ignore[union-attr]
            epoch.range = t.Range(epoch.range.start, rng.end)
        else:
            out.append(sym)
    return out
