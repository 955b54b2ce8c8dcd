"""A real VS Code: code-server (VS Code 1.100.3) with the packaged .vsix, driven by Debian's Chromium.

Everything is asserted from the page a user sees: the Problems panel, the cursor position that
"Go to Next Problem" lands on, the hover, a live append, and the event-file text view. The
stubbed node tests cannot catch what the real editor refuses (a command registered twice once
kept the client from ever connecting); this test can.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, RUNS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VSIX_DIR = ROOT / "vscode-extension"
INSTALL = Path(__file__).parent / "e2e" / "install-code-server.sh"
ARTIFACTS = Path(os.environ.get("TRAINLINT_E2E_ARTIFACTS", ROOT / ".e2e-artifacts"))


def _why_not() -> str | None:
    if not os.path.exists(CHROMIUM):
        return "Debian's chromium is not installed (.ci/run installs it)"
    if shutil.which("npm") is None or shutil.which("rg") is None:
        return "npm and ripgrep are needed to install code-server (.ci/run installs them)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not list(VSIX_DIR.glob("trainlint-*.vsix")):
        return "no packaged .vsix (make extension packages it; make test runs it first)"
    return None


pytestmark = [pytest.mark.e2e, pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    entry = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=900)
    assert entry.returncode == 0, entry.stderr
    entry_js = entry.stdout.strip().splitlines()[-1]
    base = tmp_path_factory.mktemp("code-server")
    user, exts, ws = base / "user", base / "extensions", base / "ws"
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps({
        "trainlint.interpreter": [sys.executable],
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "update.mode": "none",
        "files.autoSave": "off",
        "editor.hover.delay": 100,
        "explorer.compactFolders": False,  # one Explorer row per folder
    }))
    shutil.copytree(RUNS / "gallery-lr_hot", ws / "lr_hot")
    shutil.copytree(RUNS / "modded-nanogpt-tb", ws / "tb")
    (ws / "live").mkdir()
    (ws / "live" / "train.log").write_text("".join(f"step {i}, loss: {3.0 - i * 0.01:.4f}\n" for i in range(1, 41)))
    vsix = max(VSIX_DIR.glob("trainlint-*.vsix"), key=os.path.getmtime)
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"), "XDG_DATA_HOME": str(base / "data")}
    common = ["--user-data-dir", str(user), "--extensions-dir", str(exts)]
    inst = subprocess.run(["node", entry_js, *common, "--install-extension", str(vsix)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert inst.returncode == 0 and "was successfully installed" in inst.stdout, inst.stdout + inst.stderr
    port = _free_port()
    log = open(base / "code-server.log", "w")
    proc = subprocess.Popen(["node", entry_js, *common, "--bind-addr", f"127.0.0.1:{port}", "--auth", "none",
                             "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
                             "--config", str(base / "config.yaml"), str(ws)],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.2)
        yield {"url": f"http://127.0.0.1:{port}/?folder={ws}", "ws": ws, "log": base / "code-server.log",
               "user": user}
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        proc.kill()
        log.close()


@contextlib.contextmanager
def _workbench(code_server: dict, name: str, failed) -> Iterator:  # type: ignore[no-untyped-def]
    """Chromium on the code-server workbench; a screenshot and the server's log when ``failed()``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--no-first-run", "--disable-sync"])
        pg = browser.new_page(viewport={"width": 1400, "height": 900})
        pg.goto(code_server["url"])
        pg.wait_for_selector(".monaco-workbench .statusbar", timeout=60_000)
        try:
            yield pg
        finally:
            if failed():
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                shot = ARTIFACTS / f"{name}.png"
                pg.screenshot(path=str(shot))
                shutil.copy(code_server["log"], ARTIFACTS / "code-server.log")
                # the extension's own output channel, per extension host: when the server started, what it judged
                for i, out in enumerate(sorted(Path(code_server["user"], "logs").rglob("trainlint.log"))):
                    shutil.copy(out, ARTIFACTS / f"{name}.trainlint-{i}.log")
                print(f"screenshot: {shot}")
            browser.close()


def _failed(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return lambda: getattr(getattr(request.node, "rep_call", None), "failed", True)


@pytest.fixture
def page(code_server: dict, request: pytest.FixtureRequest) -> Iterator:
    with _workbench(code_server, request.node.name, _failed(request)) as pg:
        yield pg


def _text(pg, selector: str) -> str:
    loc = pg.locator(selector)
    return loc.first.inner_text() if loc.count() else ""


def _until(pg, fn, what: str, seconds: float = 30) -> str:
    end = time.time() + seconds
    last = ""
    while time.time() < end:
        last = fn()
        if last:
            return last
        pg.wait_for_timeout(200)
    raise AssertionError(f"timed out after {seconds:.0f} s waiting for {what}")


def _quick_open(pg, name: str) -> None:
    pg.keyboard.press("Control+p")
    pg.wait_for_selector(".quick-input-widget input", state="visible")
    pg.keyboard.type(name)
    _until(pg, lambda: _text(pg, ".quick-input-list .monaco-list-row"), f"{name} in Quick Open")
    pg.keyboard.press("Enter")


def _command(pg, title: str) -> None:
    pg.keyboard.press("F1")
    pg.wait_for_selector(".quick-input-widget input", state="visible")
    pg.keyboard.type(title)
    _until(pg, lambda: title in _text(pg, ".quick-input-list"), f"command {title!r}")
    pg.keyboard.press("Enter")


def _cursor(pg) -> str:
    """The status bar's cursor position, as a user reads it: 'Ln 429, Col 15'."""
    m = re.search(r"Ln \d+, Col \d+", _text(pg, ".statusbar"))
    return m.group(0) if m else ""


def test_findings_squiggle_hover_live_update_and_events_view(page, code_server: dict):
    pg = page
    _quick_open(pg, "lr_hot/trainer_state.json")
    pg.wait_for_selector(".monaco-editor .view-lines")
    # The Problems panel lists the findings with their rule codes and lines.
    pg.keyboard.press("Control+Shift+m")
    problems = _until(pg, lambda: (t := _text(pg, ".markers-panel")) and "TP-DIVERGE" in t and t,
                      "TP-DIVERGE in the Problems panel")
    assert "[Ln 429, Col 15]" in problems and "TP-GRAD-SPIKE" in problems
    assert "trainlint: FAIL" in _text(pg, ".statusbar")

    # "Go to Next Problem" (errors first) lands on the value that holds the measurement.
    pg.locator(".monaco-editor .view-lines").first.click()
    pg.keyboard.press("Control+Home")
    pg.keyboard.press("F8")
    _until(pg, lambda: _cursor(pg) == "Ln 429, Col 15" and "ok", "the divergence on line 429, column 15")
    pg.keyboard.press("Escape")
    # The squiggle is drawn on the cursor's line (the value's line): both decorations in one overlay row.
    row = pg.locator(".monaco-editor .view-overlays > div:has(.current-line):has(.squiggly-error)")
    _until(pg, lambda: row.count() and "ok", "a squiggle on the line of the value")

    # Hover: what was measured, and apart from it what it may mean.
    _command(pg, "Show or Focus Hover")
    # VS Code shows the diagnostic itself first, then the server's hover: Measured apart from Interpretation.
    hover = _until(pg, lambda: (t := _text(pg, ".monaco-hover:not(.hidden)")) and "Measured" in t and t, "the hover")
    measured, _, rest = hover.partition("Measured")[2].partition("Interpretation")
    assert "7.55681" in measured and "3.22x" in measured, hover
    assert "The loss ends well above" in rest, hover
    assert "7.55681" in hover and "3.22x" in hover, hover
    pg.keyboard.press("Escape")

    # A log that grows: the new NaN shows up in the Problems panel within seconds, on its line.
    live = code_server["ws"] / "live" / "train.log"
    with open(live, "a") as f:
        f.write("step 41, loss: 2.5900\nstep 42, loss: nan\n")
    t0 = time.time()
    problems = _until(pg, lambda: (t := _text(pg, ".markers-panel")) and "TP-NAN" in t and t,
                      "TP-NAN after the append", seconds=15)
    took = time.time() - t0
    assert "[Ln 42, Col 16]" in problems, problems  # "nan" in "step 42, loss: nan"
    print(f"append -> Problems panel: {took:.2f} s")

    # An event file opens as text through the extension's command, on the event file opened from the Explorer
    # (binary: VS Code opens it in a tab without a text editor; the command takes the active tab).
    tree = pg.locator(".explorer-folders-view .monaco-list-row")
    for name in ("tb", "tensorboard_logs"):
        row = tree.filter(has_text=re.compile(rf"^\s*{name}\s*$")).first
        row.click()
        if row.get_attribute("aria-expanded") != "true":
            pg.keyboard.press("ArrowRight")  # a click can land as a selection only; the key expands it
        _until(pg, lambda r=row: r.get_attribute("aria-expanded") == "true" and "ok", f"the {name} folder open")
    tree.filter(has_text="events.out.tfevents").first.click()
    _until(pg, lambda: "events.out.tfevents" in _text(pg, ".tabs-container .tab.active") and "ok",
           "the event file's tab")
    _command(pg, "trainlint: Open Event File or MLflow Database as Text")
    view = _until(pg, lambda: _text(pg, ".monaco-editor .view-line >> text=trainlint view of"),
                  "the event-file text view")
    assert "events.out.tfevents.1736552800" in view



def _bare_python() -> str | None:
    """A Python with venv and pip but without trainlint: what a new user's machine has."""
    for cand in ("python3", "python"):
        exe = shutil.which(cand)
        if exe and subprocess.run([exe, "-c", "import trainlint"], capture_output=True).returncode != 0 and \
                subprocess.run([exe, "-c", "import venv, ensurepip"], capture_output=True).returncode == 0:
            return exe
    return None


def _assert_pip_chose_the_compiled_wheel(bare: str, venv: Path) -> None:
    """The .vsix bundles the pure wheel and one compiled for the Python that built it (this one): where the user's
    Python is that same CPython, the private environment must have the compiled scanner (pip's choice from bundled/)."""
    marker = (venv / ".trainlint-wheel").read_text().split()
    assert any(n.endswith("-py3-none-any.whl") for n in marker) and len(marker) == 2, marker
    same = subprocess.run([bare, "-c", "import sys; print(sys.version_info[:2], sys.platform)"], capture_output=True,
                          text=True).stdout.strip() == f"{sys.version_info[:2]} {sys.platform}"
    probe = subprocess.run([str(venv / "bin" / "python"), "-P", "-c",
                            "from trainlint.core import accel; print(accel.REASON)"], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    assert ("compiled scanner in use" in probe.stdout) == same, (bare, probe.stdout)


def test_without_trainlint_the_bundled_wheel_goes_into_a_private_environment(code_server: dict,
                                                                             request: pytest.FixtureRequest):
    """A user whose Python lacks trainlint: the extension offers to install the wheel it ships, and then works."""
    bare = _bare_python()
    if bare is None:
        pytest.skip("no Python with venv/ensurepip and without trainlint on PATH")
    settings = code_server["user"] / "User" / "settings.json"
    cfg = json.loads(settings.read_text())
    cfg["trainlint.interpreter"] = [bare]
    settings.write_text(json.dumps(cfg))  # before the window opens: its extension host reads it at activation
    with _workbench(code_server, request.node.name, _failed(request)) as pg:
        button = pg.locator(".notifications-toasts .monaco-button", has_text="Create environment")
        button.first.wait_for(timeout=60_000)
        assert "Create a private environment" in _text(pg, ".notifications-toasts")
        button.first.click()
        storage = code_server["user"] / "User" / "globalStorage" / "trainlint.trainlint" / "venv"
        deadline = time.time() + 300
        while not (storage / ".trainlint-wheel").exists() and time.time() < deadline:
            pg.wait_for_timeout(500)
        assert (storage / ".trainlint-wheel").read_text().startswith("trainlint-"), "no private environment"
        _assert_pip_chose_the_compiled_wheel(bare, storage)
        _quick_open(pg, "lr_hot/trainer_state.json")
        pg.keyboard.press("Control+Shift+m")
        _until(pg, lambda: (t := _text(pg, ".markers-panel")) and "TP-DIVERGE" in t and t,
               "findings from the server in the private environment", seconds=60)
        _until(pg, lambda: "trainlint: FAIL" in _text(pg, ".statusbar") and "ok", "the status bar verdict")


def _expand(pg, *names: str) -> None:
    tree = pg.locator(".explorer-folders-view .monaco-list-row")
    for name in names:
        row = tree.filter(has_text=re.compile(rf"^\s*{re.escape(name)}\s*$")).first
        row.click()
        if row.get_attribute("aria-expanded") != "true":
            pg.keyboard.press("ArrowRight")
        _until(pg, lambda r=row: r.get_attribute("aria-expanded") == "true" and "ok", f"the {name} folder open")


def _first_child_row(pg, folder: str, child: str) -> int:
    """The index of ``folder``'s first child row in the Explorer, once it is ``child``. The tree marks a folder
    expanded before it has drawn its children (on CI the row after an opened folder was still the next folder)."""
    rows = pg.locator(".explorer-folders-view .monaco-list-row")

    def drawn() -> int:
        names = [rows.nth(i).get_attribute("aria-label") or "" for i in range(rows.count())]
        at = names.index(folder) + 1 if folder in names else 0
        return at if 0 < at < len(names) and names[at] == child else 0

    return int(_until(pg, drawn, f"{folder}/{child} drawn in the Explorer"))


def _curves_frame(pg, log_part: str, seconds: float = 45):  # type: ignore[no-untyped-def]
    """The webview frame whose charts are those of ``log_part`` (a curves view or the event-file editor)."""
    end = time.time() + seconds
    while time.time() < end:
        for fr in pg.frames:
            try:
                ok = fr.evaluate("(p) => !!(window.__trainlint && window.__trainlint.charts.length && "
                                 "window.__trainlint.charts[0].log.includes(p))", log_part)
            except Exception:
                continue
            if ok:
                return fr
        pg.wait_for_timeout(300)
    raise AssertionError(f"no curves of {log_part} in any webview frame")


CHARTS_JS = """() => window.__trainlint.charts.map(c => ({series: c.series, points: c.points,
    markers: c.markers.map(m => ({id: m.id, role: m.role, line: m.line, px: m.px, py: m.py}))}))"""


def _badges(pg, name: str) -> str:
    """The Explorer's decoration on a row: its badge letters (drawn by CSS ::after) and their colours."""
    return pg.evaluate("""(name) => {
        const row = [...document.querySelectorAll('.explorer-folders-view .monaco-list-row')]
            .find(r => r.innerText.includes(name));
        if (!row) return '';
        const out = [];
        for (const el of [row, ...row.querySelectorAll('*')]) {
            const after = getComputedStyle(el, '::after');
            const c = after.content;
            if (c && c !== 'none' && c !== 'normal' && c !== '""') out.push(c.replace(/"/g, ''));
            if (String(el.className).includes('decoration-itemColor')) out.push(getComputedStyle(el).color);
        }
        return out.join(' | ');
    }""", name)


def _shot(pg, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.fixture
def two_more_runs(code_server: dict) -> None:
    """Runs copied into the workspace before the workbench opens (asked for before ``page``): the other tests'
    Problems panel stays as it was, and the Explorer lists them from the start. Copied after the page had
    loaded, they once did not show within 30 s on a loaded CI machine: VS Code's file watcher, not trainlint."""
    ws = code_server["ws"]
    shutil.copytree(RUNS.parent / "live" / "keras-tb-diverge", ws / "keras")  # event files with a NaN: FAIL
    shutil.copytree(RUNS.parent / "live" / "hf-diverge", ws / "hf")  # HF Trainer stdout with tqdm redraws
    old = time.time() - 3 * 86400  # runs that stopped long ago (a fresh checkout has new mtimes)
    for p in [*(ws / "keras").rglob("*"), *(ws / "hf").rglob("*")]:
        os.utime(p, (old, old))


def test_event_file_editor_curves_view_click_and_badge(two_more_runs: None, page, code_server: dict):
    pg, ws = page, code_server["ws"]
    _until(pg, lambda: "keras" in _text(pg, ".explorer-folders-view") and "ok", "the copied runs in the Explorer")
    # An event file opened from the Explorer opens in trainlint's editor: its curves and findings
    _expand(pg, "keras", "logs", "train")
    pg.locator(".explorer-folders-view .monaco-list-row").filter(has_text="events.out.tfevents").first.click()
    _until(pg, lambda: "events.out.tfevents" in _text(pg, ".tabs-container .tab.active") and "ok",
           "the event file's tab")
    fr = _curves_frame(pg, "keras")
    charts = {c["series"]: c for c in fr.evaluate(CHARTS_JS)}
    loss = charts["train/epoch_loss (epoch-average)"]
    assert loss["points"] == 12
    assert ("TP-NAN", "value") in {(m["id"], m["role"]) for m in loss["markers"]}, loss
    assert fr.locator("button#text", has_text="Open as text").count() == 1
    # the event file's FAIL gives it a badge in the Explorer (its diagnostics live on the text view)
    _until(pg, lambda: (b := _badges(pg, "events.out.tfevents")) and "F" in b.split(" | ") and b,
           "the event file's F badge")
    # the colour propagates to the folders above; an unselected row shows the theme's list.errorForeground
    folder = _until(pg, lambda: (b := _badges(pg, "validation")) and "rgb" in b and b, "the folder's colour")
    r, g, b = (int(x) for x in re.findall(r"\d+", folder)[:3])
    assert r > 150 and g < 120 and b < 120, folder
    _shot(pg, "event-file-editor")

    # trainlint: Show Curves beside a log; a click on the TP-DIVERGE marker puts the cursor on its line
    _expand(pg, "hf")  # from the Explorer: a webview that has the focus may keep Ctrl+P from the workbench
    rows = pg.locator(".explorer-folders-view .monaco-list-row")
    rows.nth(_first_child_row(pg, "hf", "train.log")).click()  # (keras has a train.log too)
    _until(pg, lambda: "train.log" in _text(pg, ".tabs-container .tab.active") and "ok", "hf/train.log open")
    pg.wait_for_selector(".monaco-editor .view-lines")
    _command(pg, "trainlint: Show Curves")
    fr = _curves_frame(pg, "hf/train.log")
    charts = {c["series"]: c for c in fr.evaluate(CHARTS_JS)}
    assert {"loss", "grad_norm", "learning_rate", "eval_loss (per-evaluation)"} <= set(charts)
    div = [m for m in charts["loss"]["markers"] if m["id"] == "TP-DIVERGE" and m["role"] == "value"][0]
    assert div["line"] == 760  # VS Code counts a tqdm redraw's \r as a line, as the LSP does
    rendered = fr.evaluate("() => document.body.dataset.ready")
    pg.wait_for_timeout(3500)  # two refreshes of an unchanged log: the page is not drawn again (zoom is kept)
    assert fr.evaluate("() => document.body.dataset.ready") == rendered
    inner = fr.evaluate("""() => { const c = window.__trainlint.charts.find(c => c.series === 'loss');
        c.card.scrollIntoView(); const m = c.markers.find(m => m.id === 'TP-DIVERGE' && m.role === 'value');
        const r = c.card.querySelector('canvas').getBoundingClientRect();
        return {x: r.left + m.px, y: r.top + m.py}; }""")
    frame_box = fr.frame_element().bounding_box()
    assert frame_box is not None
    _shot(pg, "curves-view")
    pg.mouse.click(frame_box["x"] + inner["x"], frame_box["y"] + inner["y"])
    _until(pg, lambda: _cursor(pg) == "Ln 760, Col 1" and "ok", "the cursor on the divergence's line 760")
    assert "train.log" in _text(pg, ".tabs-container .tab.active")
    _shot(pg, "curves-click-landed")

    # The curves view follows a log while its run appends to it
    live = ws / "live" / "train.log"
    _expand(pg, "live")
    rows.nth(_first_child_row(pg, "live", "train.log")).click()
    _until(pg, lambda: _cursor(pg) == "Ln 1, Col 1" and "ok", "live/train.log open")
    _command(pg, "trainlint: Show Curves")
    fr = _curves_frame(pg, "live/train.log")
    before = {c["series"]: c["points"] for c in fr.evaluate(CHARTS_JS)}["loss"]
    with open(live, "a") as f:
        f.write("".join(f"step {i}, loss: {2.4 - (i - 42) * 0.01:.4f}\n" for i in range(43, 53)))
    grown = _until(pg, lambda: (n := {c["series"]: c["points"] for c in fr.evaluate(CHARTS_JS)}["loss"]) > before
                   and n, "the curve growing with the log", seconds=20)
    assert grown == before + 10, (before, grown)
