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
    debounceMs: 150, maxDiagnosticsPerFile: 200, watch: true, pullDiagnostics: false,
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
