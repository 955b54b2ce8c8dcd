"""The GitHub Action (action.yml) run locally step by step, and the pre-commit hook run by pre-commit itself on a
real commit in a temporary git repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, RUNS

EXPR = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _expand(text: str, inputs: dict[str, str], github: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        scope, _, name = m.group(1).partition(".")
        table = {"inputs": inputs, "github": github}[scope]
        return table[name]

    return EXPR.sub(one, text)


def run_action(workspace: Path, runner_temp: Path, installed: bool = False,
               **given: str) -> tuple[int, dict[str, str], str, str]:
    """Run the `run:` steps of action.yml as GitHub's runner does (bash --noprofile --norc -eo pipefail, the
    step's env with its expressions filled in); a `uses:` step is another Action, listed, not run here.
    ``installed``: the install step ran already in this runner (its venv is kept), start at the next."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, unknown
    inputs["python"] = sys.executable  # the runner's Python is this test's (the venv below is made from it)
    inputs.update(given)
    github = {"action_path": str(ROOT)}
    out_file, summary = runner_temp / "output.txt", runner_temp / "summary.md"
    out_file.write_text("")
    summary.unlink(missing_ok=True)
    base_env = {**os.environ, "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(out_file),
                "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(workspace), "CI": "true"}
    code, stdout = 0, ""
    for step in action["runs"]["steps"]:
        if "uses" in step or (installed and step["name"] == "Install trainlint"):
            continue
        assert step["shell"] == "bash"
        env = {**base_env, **{k: _expand(str(v), inputs, github) for k, v in step.get("env", {}).items()}}
        assert "${{" not in step["run"], "inputs reach the script through env only"
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace,
                           env=env, capture_output=True, text=True, timeout=300)
        stdout += r.stdout
        code = r.returncode
        assert "Traceback" not in r.stderr, r.stderr
        if code:
            break
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    return code, outputs, stdout, summary.read_text() if summary.exists() else ""


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runner's temp folder whose trainlint venv already sees the test environment's packages (a warm runner):
    the install step still creates the venv and pip-installs this checkout into it, without fetching the
    dependencies again."""
    temp = tmp_path_factory.mktemp("runner")
    venv = temp / "trainlint-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return temp


def test_action_annotates_writes_the_summary_and_sarif_and_fails_on_a_diverged_run(tmp_path: Path,
                                                                                      runner_temp: Path):
    ws = tmp_path / "ws"
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "runs" / "lr_hot")
    shutil.copytree(RUNS / "gallery-healthy", ws / "runs" / "healthy")
    code, outputs, stdout, summary = run_action(ws, runner_temp, paths="runs/lr_hot runs/healthy",
                                                **{"upload-sarif": "true"})
    assert code == 1 and outputs["exit-code"] == "1"
    installed = subprocess.run([str(runner_temp / "trainlint-venv" / "bin" / "python"), "-c",
                                "import trainlint; print(trainlint.__file__)"], capture_output=True, text=True)
    assert str(runner_temp) in installed.stdout  # the checkout was installed into the step's venv
    assert "::error file=runs/lr_hot/trainer_state.json,line=429," in stdout
    assert "title=TP-DIVERGE [FAIL]::" in stdout and "healthy" not in stdout
    assert "| ❌ FAIL | `runs/lr_hot/trainer_state.json` |" in summary
    assert "| ✅ PASS | `runs/healthy/trainer_state.json` |" in summary
    sarif = json.loads((ws / outputs["sarif-file"]).read_text())
    assert any(r["ruleId"] == "TP-DIVERGE" for r in sarif["runs"][0]["results"])
    upload = [s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"] if "uses" in s]
    assert upload[0]["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload[0]["with"]["sarif_file"] == "${{ inputs.sarif-file }}"


def test_action_passes_a_healthy_run_and_keeps_a_hostile_path_a_path(tmp_path: Path, runner_temp: Path):
    ws = tmp_path / "ws"
    shutil.copytree(RUNS / "gallery-healthy", ws / "$(id>pwned)")
    code, outputs, stdout, summary = run_action(ws, runner_temp, True, paths="$(id>pwned)", summary="false")
    assert code == 0 and outputs["exit-code"] == "0" and "::" not in stdout and summary == ""
    assert not (ws / "pwned").exists()
    code, outputs, _, _ = run_action(ws, runner_temp, True, paths="missing", **{"fail-on": "never"})
    assert code == 0 and outputs["exit-code"] == "2"


# -- pre-commit --------------------------------------------------------------------------------------------------

def test_hook_patterns_cover_the_names_discovery_reads():
    from trainlint.readers.registry import candidate_suffixes

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "trainlint" and "--skip-non-logs" in hook["entry"]
    files = re.compile(hook["files"])
    for suffix in candidate_suffixes() - {".db"}:  # the format registry's suffixes; an SQLite store is mlflow.db
        assert files.search(f"runs/a/train{suffix}"), suffix
    for name in ("trainer_state.json", "logs/events.out.tfevents.1737181496.host.18524.0", "mlruns/mlflow.db",
                 "slurm-1234.out"):
        assert files.search(name), name
    assert not files.search("README.md") and not files.search("model.safetensors")


def _precommit() -> list[str]:
    exe = Path(sys.executable).with_name("pre-commit")
    if not exe.exists():
        pytest.skip("pre-commit is not installed (it is in the test extra: pip install -e '.[test]')")
    return [str(exe)]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=600)


def test_pre_commit_try_repo_fails_the_commit_of_a_diverged_log_and_passes_a_healthy_one(tmp_path: Path):
    """Real commits, a real git hook, real `pre-commit try-repo` (which clones this checkout with its uncommitted
    changes and pip-installs it into a fresh hook environment at every call). The one shortcut is that of a warm
    runner: the hook environment finds trainlint's dependencies on PYTHONPATH (this test environment's) and pip
    does not fetch them again (PIP_NO_DEPS); trainlint itself is built and installed from the clone."""
    pre_commit = _precommit()
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    # the git hook runs this checkout's hook through `pre-commit try-repo` (uncommitted changes included)
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "trainlint-test" / "pre-commit"
    hook = repo / ".git" / "hooks" / "pre-commit"
    # (git sets GIT_INDEX_FILE for its hooks: try-repo must see this checkout's own index when it looks for
    # uncommitted changes to include, so the hook unsets it; the commit here uses the default index anyway)
    site = sysconfig.get_paths()["purelib"]
    hook.write_text(f"#!/bin/sh\nunset GIT_INDEX_FILE GIT_DIR\n"
                    f"export PIP_NO_DEPS=1 PIP_NO_BUILD_ISOLATION=0 PYTHONPATH={site}\n"
                    f"PRE_COMMIT_HOME={home} exec {' '.join(pre_commit)} try-repo {ROOT} trainlint\n")
    hook.chmod(0o755)
    (repo / "README.md").write_text("step 1 loss 2\n")  # not a log pattern: never judged
    shutil.copy(RUNS / "gallery-healthy" / "trainer_state.json", repo / "trainer_state.json")
    (repo / "notes.txt").write_text("nothing to measure here\n")  # matches the patterns, not a log: skipped
    _git(repo, "add", ".")
    ok = _git(repo, "commit", "-q", "-m", "healthy run")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "trainlint (training logs)" in ok.stdout + ok.stderr and "Passed" in ok.stdout + ok.stderr
    run = repo / "lr_hot"
    run.mkdir()
    shutil.copy(RUNS / "gallery-lr_hot" / "trainer_state.json", run / "trainer_state.json")
    _git(repo, "add", ".")
    bad = _git(repo, "commit", "-q", "-m", "diverged run")
    said = bad.stdout + bad.stderr
    assert bad.returncode != 0 and "Failed" in said, said
    assert "lr_hot/trainer_state.json:429:15: TP-DIVERGE [FAIL]" in said
    assert _git(repo, "log", "--format=%s").stdout.split("\n")[0] == "healthy run"  # the commit did not happen
