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
