"""The in-training callbacks (issue 16): the same rule core in memory, each finding once, stop at the first FAIL,
and never a change to the run. The framework tests run real tiny CPU runs (tests/integrations/runs.py) in a
subprocess and are skipped, with the reason, where torch or the framework is not installed."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from rulekit import judge
from trainlint.core.findings import Level
from trainlint.integrations import Guardian

RUNS = Path(__file__).parent / "integrations" / "runs.py"
FRAMEWORK_MODULE = {"hf": "transformers", "lightning": "lightning", "keras": "keras"}


def test_guardian_reports_each_finding_once_and_stops_at_the_first_fail(tmp_path: Path):
    g = Guardian(policy="stop", jsonl=tmp_path / "run.jsonl")
    seen = []
    for step in range(1, 31):
        loss = 2.0 - 0.03 * step if step != 25 else math.nan
        seen += g.observe(step, {"loss": loss, "learning_rate": 1e-3, "note": "text is not a measurement"})
        if g.should_stop:
            break  # as the trainer does when asked to stop
    fails = [f for f in seen if f.level == Level.FAIL]
    assert [f.id for f in fails] == ["TP-NAN"] and g.should_stop
    assert fails[0].evidence.text == "`loss`: 1 of 25 logged values are non-finite; the first is NaN at step 25"
    g.close()
    # the JSONL it wrote gives `trainlint check` the same finding, on the line of the NaN
    rep = judge(tmp_path / "run.jsonl")
    f = next(f for f in rep.findings if f.id == "TP-NAN")
    assert (f.evidence.text, f.location.line) == (fails[0].evidence.text, 25)


def test_guardian_on_a_healthy_run_reports_nothing_and_never_asks_to_stop():
    g = Guardian(policy="stop")
    out = [f for step in range(1, 201) for f in g.observe(step, {"loss": 3.0 * 0.99 ** step + 0.01 * (step % 3)})]
    out += g.judge(final=True)
    assert out == [] and not g.should_stop


def test_guardian_refuses_an_unknown_policy():
    with pytest.raises(ValueError, match="policy must be one of warn, stop"):
        Guardian(policy="halt")


def _run(framework: str, kind: str, policy: str, out: Path) -> dict:
    r = subprocess.run([sys.executable, str(RUNS), framework, kind, policy, str(out)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((out / "result.json").read_text()) | {"stderr": r.stderr}


def _needs(framework: str) -> None:
    for mod in ("torch", FRAMEWORK_MODULE[framework]):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed in this environment (make test installs torch==2.13.0, "
                        "transformers, accelerate, lightning and keras when it can)")


@pytest.mark.parametrize("framework", ["hf", "lightning", "keras"])
def test_callback_stops_a_real_diverging_run_with_the_finding_check_gives(framework: str, tmp_path: Path):
    _needs(framework)
    res = _run(framework, "diverge", "stop", tmp_path)
    fail = res["fail"]
    assert fail is not None, res["stderr"][-2000:]
    planned = {"hf": 160, "lightning": 160, "keras": 16}[framework]
    assert res["step"] < planned  # it stopped the run
    assert f"trainlint {fail['id']} [FAIL] {fail['evidence']}" in res["stderr"]  # reported through logging
    rep = judge(tmp_path / "trainlint.jsonl")
    assert (fail["id"], fail["evidence"]) in {(f.id, f.evidence.text) for f in rep.findings}


@pytest.mark.parametrize("framework", ["hf", "lightning", "keras"])
def test_callback_never_changes_the_run(framework: str, tmp_path: Path):
    """With and without the callback: the same batch order, bit for bit the same final weights."""
    _needs(framework)
    without = _run(framework, "healthy", "none", tmp_path / "without")
    with_cb = _run(framework, "healthy", "stop", tmp_path / "with")
    assert with_cb["fail"] is None
    assert len(without["seen"]) > 100
    assert with_cb["seen"] == without["seen"]
    assert with_cb["weights"] == without["weights"]
    assert with_cb["step"] == without["step"]
