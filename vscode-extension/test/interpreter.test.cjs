"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { compileTs } = require("./helpers/load.cjs");

const m = compileTs("src/interpreter.ts");

test("the trainlint.interpreter setting wins", () => {
  const api = { environments: { getActiveEnvironmentPath: () => ({ path: "/envs/py/bin/python" }) } };
  assert.deepEqual(m.resolveInterpreter(" /opt/py/bin/python ", api), { python: "/opt/py/bin/python", source: "setting" });
  assert.deepEqual(m.resolveInterpreter(["/opt/py/bin/python"], api), { python: "/opt/py/bin/python", source: "setting" });
  assert.deepEqual(m.resolveInterpreter([], api), { python: "/envs/py/bin/python", source: "python-extension" });
});

test("else the Python extension's active environment (new API, then old API)", () => {
  const fresh = { environments: { getActiveEnvironmentPath: () => ({ path: "/envs/a/bin/python" }) } };
  assert.deepEqual(m.resolveInterpreter("", fresh), { python: "/envs/a/bin/python", source: "python-extension" });
  const old = { settings: { getExecutionDetails: () => ({ execCommand: ["/envs/b/bin/python"] }) } };
  assert.deepEqual(m.resolveInterpreter(undefined, old), { python: "/envs/b/bin/python", source: "python-extension" });
});

test("else python3", () => {
  assert.deepEqual(m.resolveInterpreter("", undefined), { python: "python3", source: "default" });
  assert.deepEqual(m.resolveInterpreter("", { environments: { getActiveEnvironmentPath: () => undefined } }),
    { python: "python3", source: "default" });
});

test("the server command and the install hint", () => {
  assert.deepEqual(m.serverCommand("/p/python", ["--log-level", "INFO"]),
    { command: "/p/python", args: ["-P", "-m", "trainlint.cli", "serve", "--log-level", "INFO"] });
  assert.equal(m.installHint("/My Envs/python"), '"/My Envs/python" -m pip install trainlint');
  assert.equal(m.installHint("python3"), "python3 -m pip install trainlint");
});

test("the launch: trainlint.path, then the private environment, the interpreter, the offer, or missing", () => {
  const interp = { python: "/usr/bin/python3", source: "default" };
  const base = { path: [], importStrategy: "useBundled", interpreter: interp, interpreterHasTrainlint: false };
  assert.deepEqual(m.chooseLaunch({ ...base, path: ["/opt/trainlint", "--x"] }),
    { kind: "path", command: "/opt/trainlint", args: ["--x"] });
  assert.deepEqual(m.chooseLaunch({ ...base, privatePython: "/s/venv/bin/python", interpreterHasTrainlint: true }),
    { kind: "python", python: "/s/venv/bin/python", source: "private environment" });
  assert.deepEqual(m.chooseLaunch({ ...base, interpreterHasTrainlint: true, bundledWheels: ["/x.whl"] }),
    { kind: "python", python: "/usr/bin/python3", source: "default" });
  const wheels = ["/e/bundled/trainlint-0.1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
    "/e/bundled/trainlint-0.1.0-py3-none-any.whl"];
  assert.deepEqual(m.chooseLaunch({ ...base, bundledWheels: wheels }),
    { kind: "offer-private-env", python: "/usr/bin/python3", wheels });
  assert.deepEqual(m.chooseLaunch({ ...base, bundledWheels: [] }), { kind: "missing", python: "/usr/bin/python3" });
  assert.deepEqual(m.chooseLaunch({ ...base, importStrategy: "fromEnvironment", bundledWheels: ["/x.whl"],
    privatePython: "/s/venv/bin/python" }), { kind: "missing", python: "/usr/bin/python3" });
  assert.equal(m.privateEnvPython("/s", "linux"), "/s/venv/bin/python");
});

test("the server and the import probe never import a trainlint/ folder of the workspace they run in", () => {
  // Issue 25 item 2: started with the workspace as working folder, `python -m trainlint.cli` imported the
  // workspace's own trainlint/ package (here: one that writes a marker file).
  const { spawnSync } = require("node:child_process");
  const fs = require("node:fs");
  const os = require("node:os");
  const path = require("node:path");
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-hostile-"));
  const marker = path.join(ws, "marker");
  fs.mkdirSync(path.join(ws, "trainlint", "lsp"), { recursive: true });
  const code = `open(${JSON.stringify(marker)}, "w").write("imported")\n`;
  for (const f of ["__init__.py", "cli.py", "lsp/__init__.py", "lsp/server.py"]) {
    fs.writeFileSync(path.join(ws, "trainlint", f), code);
  }
  const python = process.env.TRAINLINT_PYTHON || "python3";
  const server = m.serverCommand(python, []);
  for (const args of [server.args, m.IMPORT_CHECK]) {
    const r = spawnSync(server.command, args, { cwd: ws, input: "", timeout: 30000 });
    assert.ok(!r.error, String(r.error));
    assert.ok(!fs.existsSync(marker), `${args.join(" ")} imported the workspace's trainlint/`);
  }
});

test("the private environment installs the dependencies pinned by hash, then the wheel pip picks from bundled/", () => {
  const steps = m.privateEnvInstall("/s/venv/bin/python", "/b", "0.1.0", "/b/requirements.txt");
  assert.deepEqual(steps, [
    ["/s/venv/bin/python", ["-P", "-m", "pip", "install", "--require-hashes", "-r",
      "/b/requirements.txt"]],
    // only the bundled files are candidates (--no-index): pip takes the compiled wheel where its tags fit
    ["/s/venv/bin/python", ["-P", "-m", "pip", "install", "--no-deps", "--no-index", "--find-links", "/b",
      "trainlint==0.1.0"]],
  ]);
  // a development build without the pinned list: trainlint from the folder, then its dependencies as declared
  assert.deepEqual(m.privateEnvInstall("/p", "/b", "0.2.0", undefined), [
    ["/p", ["-P", "-m", "pip", "install", "--no-deps", "--no-index", "--find-links", "/b", "trainlint==0.2.0"]],
    ["/p", ["-P", "-m", "pip", "install", "trainlint==0.2.0"]],
  ]);
});

test("the version asked for is the bundled wheels' (the pure one's first), on any path separator", () => {
  assert.equal(m.bundledVersion(["/b/trainlint-0.1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
    "/b/trainlint-0.1.0-py3-none-any.whl"]), "0.1.0");
  assert.equal(m.bundledVersion(["C:\\ext\\bundled\\trainlint-0.3.1-py3-none-any.whl"]), "0.3.1");
  assert.equal(m.bundledVersion(["/b/trainlint-0.2.0-cp311-cp311-win_amd64.whl"]), "0.2.0");
  assert.equal(m.bundledVersion(["/b/other-1.0-py3-none-any.whl"]), undefined);
  assert.equal(m.bundledVersion([]), undefined);
});

test("the private environment's marker names every bundled wheel: any change to the set remakes it", () => {
  const pure = "/e/bundled/trainlint-0.1.0-py3-none-any.whl";
  const compiled = "/e/bundled/trainlint-0.1.0-cp311-cp311-manylinux_2_17_x86_64.whl";
  const both = m.wheelMarker([pure, compiled]);
  assert.equal(both, "trainlint-0.1.0-cp311-cp311-manylinux_2_17_x86_64.whl\ntrainlint-0.1.0-py3-none-any.whl");
  assert.equal(m.wheelMarker([compiled, pure]), both, "the order the folder lists them in does not count");
  // an environment made from the pure wheel alone (the .vsix before this one) is not this bundle's
  assert.notEqual(m.wheelMarker([pure]), both);
  assert.equal(m.wheelMarker([pure]), "trainlint-0.1.0-py3-none-any.whl");
  assert.notEqual(m.wheelMarker([pure.replace("0.1.0", "0.1.1"), compiled.replace("0.1.0", "0.1.1")]), both);
});
