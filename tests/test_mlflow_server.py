"""``trainlint check mlflow:EXPERIMENT`` / ``mlflow:runs/ID`` against a real ``mlflow server`` on loopback,
started here on an SQLite backend in a temporary folder; the runs are logged with the mlflow client first."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

TRAINLINT = [sys.executable, "-m", "trainlint.cli"]

LOG_RUNS = textwrap.dedent("""
    import json, math, mlflow
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient
    client = MlflowClient()
    exp = client.create_experiment("fleet")
    ids = {}
    for name in ("diverging", "healthy"):
        run = client.create_run(exp, run_name=name)
        ms = []
        for step in range(1, 61):
            if name == "healthy":
                loss = 3.0 * 0.97 ** step
            else:
                loss = 3.0 * 0.97 ** step if step <= 30 else 3.0 * 0.97 ** 30 + 0.2 * (step - 30)
            ms.append(Metric("loss", loss, 1_700_000_000_000 + step * 1000, step))
            ms.append(Metric("learning_rate", 1e-3, 1_700_000_000_000 + step * 1000, step))
        for i in range(0, len(ms), 1000):
            client.log_batch(run.info.run_id, metrics=ms[i:i + 1000])
        client.set_terminated(run.info.run_id)
        ids[name] = run.info.run_id
    print(json.dumps(ids))
""")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    try:
        import mlflow  # noqa: F401
    except ImportError as e:
        pytest.skip(f"mlflow is not installed (it is in the test extra; it may not install here): {e}")
    d = tmp_path_factory.mktemp("mlflow")
    port = _port()
    uri = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                             "--backend-store-uri", f"sqlite:///{d}/mlflow.db", "--default-artifact-root",
                             str(d / "artifacts"), "--workers", "1"],
                            stdout=subprocess.DEVNULL, stderr=open(d / "server.log", "w"), env=env, cwd=d)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mlflow server did not start: {(d / 'server.log').read_text()[-3000:]}")
            time.sleep(0.3)
        logged = subprocess.run([sys.executable, "-c", LOG_RUNS], capture_output=True, text=True, env=env,
                                timeout=120)
        assert logged.returncode == 0, logged.stderr[-3000:]
        yield env, json.loads(logged.stdout.strip().splitlines()[-1])
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def tl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRAINLINT, *args], capture_output=True, text=True, env=env, timeout=120)


def test_an_experiment_judges_each_run_and_locates_the_finding_on_the_metric_view(server):
    env, ids = server
    r = tl("check", "mlflow:fleet", env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    div = [x for x in lines if "TP-DIVERGE [FAIL]" in x]
    assert len(div) == 1 and div[0].startswith(f"mlflow:runs/{ids['diverging']}#record=")
    assert f"mlflow:runs/{ids['diverging']}: FAIL" in "\n".join(lines)
    assert f"mlflow:runs/{ids['healthy']}: PASS" in "\n".join(lines)
    # the record is a line of the run's text view: `trainlint events` prints that view
    record = int(div[0].split("#record=")[1].split(":")[0])
    view = tl("events", f"mlflow:runs/{ids['diverging']}", env=env).stdout.splitlines()
    step, tag, value, _wall, rec = view[record + 1].split("\t")
    assert (tag, rec) == ("loss", str(record))
    expected = 3.0 * 0.97 ** 30 + 0.2 * (int(step) - 30) if int(step) > 30 else 3.0 * 0.97 ** int(step)
    assert math.isclose(float(value), expected, rel_tol=1e-12)
    assert view[0].startswith("# trainlint view of") and len(view) == 1 + 120  # two metrics of 60 points


def test_one_run_by_id_and_every_output_names_it(server):
    env, ids = server
    url = f"mlflow:runs/{ids['diverging']}"
    doc = json.loads(tl("check", "--format", "json", url, env=env).stdout)
    [rep] = doc["reports"]
    assert rep["path"] == url and rep["format"] == "mlflow-rest" and rep["verdict"] == "FAIL"
    loss = [s for s in rep["series"] if s["name"] == "loss"][0]
    assert (loss["points"], loss["first_step"], loss["last_step"]) == (60, 1, 60)
    gh = tl("check", "--output-format", "github", url, env=env).stdout
    assert gh.startswith(f"::error file=mlflow%3Aruns/{ids['diverging']},title=TP-DIVERGE [FAIL]::")


def test_metric_history_is_read_in_pages(server, monkeypatch):
    env, ids = server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", env["MLFLOW_TRACKING_URI"])
    from trainlint.readers import mlflow_rest

    calls: list[str] = []
    real = mlflow_rest.call

    def counted(endpoint, params=None, body=None):  # type: ignore[no-untyped-def]
        calls.append(endpoint)
        return real(endpoint, params, body)

    monkeypatch.setattr(mlflow_rest, "call", counted)
    monkeypatch.setattr(mlflow_rest, "HISTORY_PAGE", 7)
    monkeypatch.setattr(mlflow_rest, "SEARCH_PAGE", 1)
    assert mlflow_rest.runs_of("mlflow:fleet") == [f"mlflow:runs/{ids['diverging']}", f"mlflow:runs/{ids['healthy']}"]
    assert calls.count("runs/search") >= 2
    src = mlflow_rest.MlflowRestTail(f"mlflow:runs/{ids['healthy']}")
    assert src.update()
    [loss] = [s for s in src.log.series.values() if s.name == "loss"]
    assert list(loss.steps) == [float(i) for i in range(1, 61)]
    assert loss.values[-1] == pytest.approx(3.0 * 0.97 ** 60)
    assert calls.count("metrics/get-history") == 2 * math.ceil(60 / 7)
    assert not src.update()  # nothing new: one runs/get, no history read


def test_an_unreachable_or_unset_tracking_server_is_not_checked_with_the_reason():
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"http://127.0.0.1:{_port()}"}
    r = tl("check", "mlflow:fleet", env=env)
    assert r.returncode == 2 and "NOT-CHECKED" in r.stdout and "cannot be reached" in r.stdout
    env.pop("MLFLOW_TRACKING_URI")
    r = tl("check", "mlflow:fleet", env=env)
    assert r.returncode == 2 and "MLFLOW_TRACKING_URI must be the http(s):// address" in r.stdout
