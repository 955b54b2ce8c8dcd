"""``trainlint report``: one self-contained HTML file (no URL in it), rendered by the real Chromium (Debian's, driven
by playwright, never a downloaded browser): a chart per judged series, the findings drawn on them, a screenshot
that is not blank. Logs: fixtures/live (real runs of HF Trainer, TRL, a resumed HF run)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from trainlint.core.model import Role, Series
from trainlint.curves import MAX_POINTS, _keep

LIVE = FIXTURES / "live"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("TRAINLINT_E2E_ARTIFACTS", ROOT / ".e2e-artifacts"))


def report(tmp_path: Path, *paths: Path) -> tuple[subprocess.CompletedProcess, str]:
    out = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "report", *map(str, paths), "-o", str(out)],
                       capture_output=True, text=True, cwd=tmp_path)
    return r, out.read_text(encoding="utf-8") if out.exists() else ""


def data_of(page: str) -> list[dict]:
    return json.loads(re.search(r'<script id="tl-data" type="application/json">(.*?)</script>', page, re.S)[1])


def test_report_is_self_contained_and_holds_the_findings(tmp_path: Path):
    r, page = report(tmp_path, LIVE / "hf-diverge", LIVE / "trl-nan")
    assert r.returncode == 1, r.stderr  # a FAIL, as `check` exits
    assert "wrote" in r.stdout and "2 log(s), 2 FAIL" in r.stdout
    assert not re.search(r"https?://|\bsrc=|<link\b|@import", page)  # nothing is fetched to open it
    docs = {Path(d["path"]).parent.name: d for d in data_of(page)}
    hf = docs["hf-diverge"]
    assert {s["label"] for s in hf["series"]} >= {"loss", "eval_loss (per-evaluation)", "learning_rate", "grad_norm"}
    div = [f for f in hf["findings"] if f["id"] == "TP-DIVERGE"][0]
    assert div["line"] == 165  # as grep -n counts the tqdm log (the CLI's line)
    assert {w["name"]: (w["from"], w["to"]) for w in div["windows"]} == {"end window": (280, 300),
                                                                         "lowest window": (25, 45)}
    # TP-DEAD-RUN on the same value is folded into TP-DIVERGE (issue 30): its start window is marked too
    assert {m["role"] for m in div["marks"]} == {"value", "minimum", "window-start", "start"}
    nan = [f for f in docs["trl-nan"]["findings"] if f["id"] == "TP-NAN"][0]
    assert nan["line"] == 33 and nan["marks"][0]["nonfinite"] == "nan" and nan["marks"][0]["value"] is None


def test_thinning_keeps_spikes_and_non_finite_points():
    s = Series("loss", Role.TRAIN_LOSS)
    n = 50_000
    for i in range(n):
        s.append(i, 1.0 + (i % 7) * 1e-3)
    s.values[31_337] = 1e6
    s.values[40_001] = float("nan")
    keep = _keep(s, {12_345})
    assert len(keep) <= MAX_POINTS + 20 and {0, n - 1, 12_345, 31_337, 40_001} <= set(keep)


def _why_not() -> str | None:
    if not os.path.exists(CHROMIUM):
        return "Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
def test_report_renders_in_chromium(tmp_path: Path):
    from playwright.sync_api import sync_playwright

    r, page = report(tmp_path, LIVE / "hf-diverge", LIVE / "trl-nan", LIVE / "hf-resume")
    assert r.returncode == 1, r.stderr
    want = sum(len(d["series"]) for d in data_of(page))
    shot = tmp_path / "report.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": 1300, "height": 1000})
        requests: list[str] = []
        pg.on("request", lambda q: requests.append(q.url))
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto((tmp_path / "report.html").as_uri())
        pg.wait_for_selector(".tl-chart canvas")
        try:
            charts = pg.evaluate("""() => window.__trainlint.charts.map(c => ({log: c.log, series: c.series,
                points: c.points, markers: c.markers.map(m => ({id: m.id, role: m.role, line: m.line}))}))""")
            canvases = pg.locator(".tl-chart canvas").count()
            assert not errors, errors
            assert len(charts) == want and canvases == want  # a chart (one canvas) per judged series
            hf = {c["series"]: c for c in charts if "hf-diverge" in c["log"]}
            assert hf["loss"]["points"] == 60
            assert ("TP-DIVERGE", "value", 165) in {(m["id"], m["role"], m["line"]) for m in hf["loss"]["markers"]}
            nan = {c["series"]: c for c in charts if "trl-nan" in c["log"]}["eval_loss (per-evaluation)"]
            assert ("TP-NAN", "value", 33) in {(m["id"], m["role"], m["line"]) for m in nan["markers"]}
            resumed = [c for c in charts if "hf-resume" in c["log"]]
            assert any(m["role"] == "seam" for c in resumed for m in c["markers"])  # the resume seam is drawn
            # clicking the TP-DIVERGE marker tells its line
            box = pg.evaluate("""() => { const c = window.__trainlint.charts.find(c => c.log.includes('hf-diverge')
                && c.series === 'loss'); const m = c.markers.find(m => m.id === 'TP-DIVERGE' && m.role === 'value');
                c.card.scrollIntoView(); const r = c.card.querySelector('canvas').getBoundingClientRect();
                return {x: r.left + m.px, y: r.top + m.py}; }""")
            pg.mouse.click(box["x"], box["y"])
            assert pg.locator("#tl-where").inner_text().endswith("hf-diverge/train.log:165")
            pg.locator("#tl-log-scale").check()  # the log-scale toggle redraws every chart
            pg.wait_for_function(f"window.__trainlint.charts.length === {want}")
            pg.screenshot(path=str(shot), full_page=False)
            assert not [u for u in requests if not u.startswith("file:")], requests
        except BaseException:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(ARTIFACTS / "report-failed.png"), full_page=True)
            raise
        finally:
            browser.close()
    # the screenshot is not blank: many distinct colours, not one background
    from PIL import Image

    img = Image.open(shot).convert("RGB").resize((260, 200))
    assert len(set(img.getdata())) > 50
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "report.png")
