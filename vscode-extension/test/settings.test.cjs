"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { compileTs } = require("./helpers/load.cjs");

const s = compileTs("src/settings.ts");

test("settings reach the server in the shape it parses", () => {
  const values = { scope: "open-files", "severity.fail": "warning", select: ["TP"], ignore: ["TP-THROUGHPUT"],
    ignorePatterns: ["**/old/**"] };
  const got = s.readSettings((k, d) => (k in values ? values[k] : d));
  assert.deepEqual(got, { scope: "open-files", select: ["TP"], ignore: ["TP-THROUGHPUT"], ignorePatterns: ["**/old/**"],
    debounceMs: 150, maxDiagnosticsPerFile: 200, watch: true, pullDiagnostics: false, lineBreaks: "auto",
    severity: { fail: "warning", warn: "warning", info: "information", notChecked: "hint" } });
});

test("defaults", () => {
  const got = s.readSettings((_k, d) => d);
  assert.equal(got.scope, "workspace");
  assert.deepEqual(got.severity, { fail: "error", warn: "warning", info: "information", notChecked: "hint" });
});

test("the document patterns match the log names the server reads", () => {
  // path.matchesGlob is Node 22+; this is the same glob semantics for these simple patterns.
  const toRe = (g) => new RegExp("^" + g.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*\*\//g, "\u0000")
    .replace(/\*/g, "[^/]*").replace(/\u0000/g, "(?:.*/)?") + "$");
  const matches = (p) => s.DOCUMENT_PATTERNS.some((g) => toRe(g).test(p));
  for (const p of ["run/trainer_state.json", "out/trainer_0_log.txt", "lightning_logs/version_0/metrics.csv",
    "a/trainer_log.jsonl", "output/metrics.json", "log/log.txt", "train.log", "nemo/train_manifest.json",
    "tts/metadata.csv"]) {
    assert.ok(matches(p), p);
  }
  assert.ok(!matches("src/model.py") && !matches("config.yaml"));
  assert.equal(path.basename("x"), "x");
});

test("the status bar verdict", () => {
  assert.equal(s.worstVerdict([2, 0, 1]), "FAIL");
  assert.equal(s.worstVerdict([2, 1]), "WARN");
  assert.equal(s.worstVerdict([3]), "PASS");
  assert.equal(s.worstVerdict([]), "no findings");
});

test("settings that name a program to run are the user's own, never a repository's", () => {
  // Issue 25 item 7: with `resource` scope a cloned repository's .vscode/settings.json could set
  // trainlint.path / trainlint.interpreter / trainlint.args and run any program once the folder was trusted.
  const pkg = require(path.join(__dirname, "..", "package.json"));
  const props = pkg.contributes.configuration.properties;
  for (const key of s.EXECUTABLE_KEYS) {
    assert.equal(props[key].scope, "machine", key);
  }
  assert.deepEqual([...s.EXECUTABLE_KEYS].sort(), ["trainlint.args", "trainlint.interpreter", "trainlint.path"]);
  // and the extension reads only the user's value, whatever a workspace file says
  const inspected = { defaultValue: [], globalValue: ["/home/me/py"], workspaceValue: ["/tmp/evil"],
    workspaceFolderValue: ["/tmp/evil2"] };
  assert.deepEqual(s.userValue(inspected, []), ["/home/me/py"]);
  assert.deepEqual(s.userValue({ defaultValue: [], workspaceValue: ["/tmp/evil"] }, []), []);
  assert.deepEqual(s.userValue(undefined, ["x"]), ["x"]);
});
