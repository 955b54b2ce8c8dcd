"""CI renderings of ``trainlint check``: GitHub workflow commands, GitLab Code Quality, JUnit XML, a Markdown
summary, and SARIF fingerprints that do not move with the line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import LOGS, ROOT, RUNS

TRAINLINT = [sys.executable, "-m", "trainlint.cli"]


def check(*args: str, cwd: Path | str = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRAINLINT, "check", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def sarif_results(path: Path, cwd: Path) -> list[dict]:
    r = check("--output-format", "sarif", str(path), cwd=cwd)
    return json.loads(r.stdout)["runs"][0]["results"]


def test_sarif_fingerprints_equal_after_three_lines_inserted_above_the_finding(tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "gallery-lr_hot", run)
    before = {x["ruleId"]: x for x in sarif_results(run, tmp_path)}
    div = before["TP-DIVERGE"]
    assert div["locations"][0]["physicalLocation"]["region"]["startLine"] == 429
    state = run / "trainer_state.json"
    lines = state.read_text().split("\n")
    state.write_text("\n".join([lines[0], "", "  ", "", *lines[1:]]))  # three lines of JSON whitespace at line 2
    after = {x["ruleId"]: x for x in sarif_results(run, tmp_path)}
    assert after["TP-DIVERGE"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 432
    assert set(before) == set(after)
    for rid in before:
        assert before[rid]["partialFingerprints"] == after[rid]["partialFingerprints"], rid
    prints = [x["partialFingerprints"]["trainlintFinding/v1"] for x in before.values()]
    assert len(set(prints)) == len(prints)  # each finding its own


def test_sarif_fingerprint_follows_the_measured_value_on_a_text_log(tmp_path: Path):
    log = tmp_path / "gpt2_train.log"
    text = (LOGS / "gpt2_train.11672114.log").read_text()
    nan = "step  751/19560 | loss nan (+0.00z)| norm 0.5812 (-1.13z)| lr 6.00e-04 | 4212.08 ms\n"
    log.write_text(text + nan)
    [a] = [x for x in sarif_results(log, tmp_path) if x["ruleId"] == "TP-NAN"]
    log.write_text("three\nlines\nabove\n" + text + nan)
    [b] = [x for x in sarif_results(log, tmp_path) if x["ruleId"] == "TP-NAN"]
    line_a = a["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert b["locations"][0]["physicalLocation"]["region"]["startLine"] == line_a + 3
    assert a["partialFingerprints"] == b["partialFingerprints"]
    log.write_text(text + nan.replace("loss nan", "loss inf"))  # another measured value: another finding
    [c] = [x for x in sarif_results(log, tmp_path) if x["ruleId"] == "TP-NAN"]
    assert c["partialFingerprints"] != a["partialFingerprints"]


def test_sarif_stays_within_githubs_limits():
    from trainlint.output import sarif

    assert sarif.MAX_RESULTS == 25_000 and sarif.MAX_LOCATIONS == 1_000
    doc = json.loads(check("--output-format", "sarif", "fixtures/runs").stdout)
    for res in doc["runs"][0]["results"]:
        assert len(res["locations"]) == 1 and len(res.get("relatedLocations", [])) <= 1_000
        assert "trainlintFinding/v1" in res["partialFingerprints"]


def test_github_workflow_commands_and_their_escaping(tmp_path: Path):
    from trainlint.output.github import escape_data, escape_property

    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("x,y:z%\n") == "x%2Cy%3Az%25%0A"
    # a real log whose name and series name hold every character GitHub's runner treats specially
    with open(tmp_path / "run,1:a%.jsonl", "w") as f:
        for i in range(1, 60):
            f.write(json.dumps({"step": i, "train/loss%\nx": 3.0 - 0.02 * i if i < 59 else float("nan")}) + "\n")
    r = check("--output-format", "github", ".", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines() == [
        "::error file=run%2C1%3Aa%25.jsonl,line=59,endLine=59,col=32,endColumn=35,title=TP-NAN [FAIL]::"
        "`train/loss%25%0Ax`: 1 of 59 logged values are non-finite; the first is NaN at step 59"]
    lines = check("--output-format", "github", "fixtures/runs/gallery-lr_hot").stdout.splitlines()
    assert lines[0].startswith("::error file=fixtures/runs/gallery-lr_hot/trainer_state.json,line=429,endLine=429,"
                               "col=15,endColumn=32,title=TP-DIVERGE [FAIL]::`loss` (per-step): end level 7.55681")
    assert lines[1].startswith("::warning file=fixtures/runs/gallery-lr_hot/trainer_state.json,line=147,")
    assert check("--output-format", "github", "fixtures/runs/gallery-healthy").stdout == "\n"  # nothing to annotate


def test_gitlab_code_quality_has_the_required_keys():
    r = check("--output-format", "gitlab", "fixtures/runs/gallery-lr_hot", "fixtures/runs/modded-nanogpt-tb",
              "fixtures/runs/gallery-overfit")
    issues = json.loads(r.stdout)
    assert isinstance(issues, list) and issues
    for it in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(it)
        assert it["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(it["location"]["path"], str) and not it["location"]["path"].startswith("/")
        assert isinstance(it["location"]["lines"]["begin"], int) and it["location"]["lines"]["begin"] >= 1
        assert len(it["fingerprint"]) == 32
    assert len({it["fingerprint"] for it in issues}) == len(issues)
    div = [it for it in issues if it["check_name"] == "TP-DIVERGE"][0]
    assert div["severity"] == "major" and div["location"]["lines"]["begin"] == 429


def test_junit_has_the_structure_ci_services_read(tmp_path: Path):
    (tmp_path / "empty.log").write_text("")
    r = check("--output-format", "junit", "fixtures/runs/gallery-lr_hot", "fixtures/runs/gallery-healthy",
              str(tmp_path / "empty.log"))
    assert r.returncode == 1 and r.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(r.stdout)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 3
    allowed = {"failure", "error", "skipped", "system-out", "system-err", "properties"}
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        cases = s.findall("testcase")
        assert s.get("name") and cases and set(s.attrib) >= set(total)
        got = {"tests": len(cases), "failures": sum(c.find("failure") is not None for c in cases),
               "errors": sum(c.find("error") is not None for c in cases),
               "skipped": sum(c.find("skipped") is not None for c in cases)}
        assert {k: int(s.get(k)) for k in got} == got
        for k in total:
            total[k] += got[k]
        for c in cases:
            assert c.get("name") and c.get("classname") and {ch.tag for ch in c} <= allowed
            assert sum(ch.tag in ("failure", "error", "skipped") for ch in c) <= 1
    assert {k: int(root.get(k)) for k in total} == total
    assert total["failures"] == 1 and total["skipped"] == 1
    fail = root.find(".//failure")
    assert fail.get("type") == "TP-DIVERGE" and fail.get("message").startswith("`loss` (per-step): end level")


def test_markdown_summary_tables():
    out = check("--output-format", "markdown", "fixtures/runs/gallery-lr_hot", "fixtures/runs/gallery-healthy").stdout
    lines = out.splitlines()
    assert lines[0] == "## trainlint" and "Judged 2 logs: 1 FAIL, 1 PASS." in lines
    from trainlint.judge import judge_path

    rep = judge_path("fixtures/runs/gallery-lr_hot/trainer_state.json")  # the counts are the report's, whatever
    ran, skipped = len(rep.ran), len(rep.skipped)                          # checks the registry holds
    assert f"| ❌ FAIL | `fixtures/runs/gallery-lr_hot/trainer_state.json` | ran {ran}, skipped {skipped} |" in lines
    row = [x for x in lines if "TP-DIVERGE" in x][0]
    assert row.startswith("| ❌ FAIL | TP-DIVERGE | `fixtures/runs/gallery-lr_hot/trainer_state.json:429` | ")
    assert all(x.count("|") - x.count("\\|") in (4, 5) for x in lines if x.startswith("|"))
