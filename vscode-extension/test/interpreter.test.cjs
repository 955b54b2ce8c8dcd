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
    { command: "/p/python", args: ["-m", "trainlint.cli", "serve", "--log-level", "INFO"] });
  assert.equal(m.installHint("/My Envs/python"), '"/My Envs/python" -m pip install trainlint');
  assert.equal(m.installHint("python3"), "python3 -m pip install trainlint");
});
