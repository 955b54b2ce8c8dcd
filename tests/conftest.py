"""Shared paths. Tests that read ../shared/corpus skip with a reason where it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
RUNS = FIXTURES / "runs"
LOGS = FIXTURES / "logs"
CORPUS = Path(os.environ.get("TRAINLINT_CORPUS", ROOT.parent / "shared" / "corpus"))
TRAINPROOF = CORPUS / "trainproof"
XTTS_FULL = TRAINPROOF / "evidence" / "xtts_coqui_feb2026" / "trainer_0_log.txt"
XTTS_EVENTS = TRAINPROOF / "evidence" / "xtts_coqui_feb2026" / "events.out.tfevents.1770764871.InfinityGear.19364.0"
XTTS_PREFIX = RUNS / "xtts-prefix" / "trainer_0_log.txt"
GALLERY = TRAINPROOF / "examples" / "gallery"


def corpus(rel: str) -> Path:
    """A corpus file, or skip the test with the reason it is not there."""
    p = CORPUS / rel
    if not p.exists():
        pytest.skip(f"corpus file not available: {p} (set TRAINLINT_CORPUS to ../shared/corpus)")
    return p


def series(log, name, aggregation=None):  # type: ignore[no-untyped-def]
    found = [s for s in log.series.values() if s.name == name
             and (aggregation is None or s.aggregation.value == aggregation)]
    assert len(found) == 1, f"{name} {aggregation}: {[s.label for s in log.series.values()]}"
    return found[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    """Each phase's report on the test item, so fixtures can save screenshots when the test failed."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def hf_lag_runs(odd: bool, runs: int = 3000, seed: int = 28):  # type: ignore[no-untyped-def]
    """Runs of HF dicts for `_hf_lag` as HF prints them: (run index, the bar's total, and per dict the ``epoch`` pair,
    the bar's step and whether it is an evaluation). 4.x rounded floats and 5.x 4-digit strings; 1 to 700 steps per
    epoch, bars of 5 to 2,000 steps, a bar lagging 0 to 3 steps or ahead up to 2, a resume now and then. ``odd``
    adds epochs that pin nothing ('nan', 'inf', '-1', '0', 'x') and dicts without an epoch."""
    import random

    r = random.Random(seed)
    for k in range(runs):
        spe, quoted = r.choice([1, 1, 2, 3, 7, 16, 32, 64, 100, 333, 700]), r.random() < 0.5
        bar_total = r.choice([5, 40, 300, 2000])
        g, calls = r.randint(0, 3), []
        for _ in range(r.randint(1, 40)):
            g = g + r.randint(1, 6) if r.random() > 0.05 else max(1, g - r.randint(1, 30))
            ep = g / spe
            text = f"{ep:.4g}" if quoted else repr(round(ep, r.choice([2, 4, 6])))
            if odd and r.random() < 0.02:
                text = r.choice(["nan", "inf", "-1", "0", "x"])
            bar = float(max(0, g + r.randint(-3, 2)))
            is_eval = r.random() < 0.1
            m = None if odd and r.random() < 0.02 else ("epoch", text, quoted)
            calls.append((m, bar, is_eval))
        yield k, bar_total, calls
