// The real bundle, the real vscode-languageclient and the real Python server, behind a stub `vscode`.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { stub, root } = require("./helpers/load.cjs");

const repo = path.resolve(root, "..");
const python = process.env.TRAINLINT_PYTHON || path.join(repo, ".venv", "bin", "python");
const bundle = path.join(root, "dist", "extension.js");
const { recorded, settings, docEvents, textDocument, Uri } = stub.__stub;

function context() {
  return { subscriptions: [], extensionPath: root, extensionUri: Uri.file(root), globalState: { get() {}, update: async () => {} },
    globalStorageUri: Uri.file(fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-storage-"))),
    workspaceState: { get() {}, update: async () => {} }, asAbsolutePath: (p) => path.join(root, p) };
}

/** What VS Code does when an extension stops: deactivate, then dispose what it subscribed. */
async function shutdown(ext, ctx) {
  await ext.deactivate();
  for (const d of ctx.subscriptions.splice(0)) d.dispose();
}

async function until(fn, what, ms = 30000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("the extension starts the server and its diagnostics reach VS Code", { skip: !fs.existsSync(python) && `no ${python}` }, async (t) => {
  assert.ok(fs.existsSync(bundle), "run `npm run build` first");
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-vscode-"));
  fs.cpSync(path.join(repo, "fixtures", "runs", "gallery-lr_hot"), path.join(ws, "lr_hot"), { recursive: true });
  fs.cpSync(path.join(repo, "fixtures", "runs", "modded-nanogpt-tb"), path.join(ws, "tb"), { recursive: true });
  recorded.folders = [{ uri: Uri.file(ws), name: "ws", index: 0 }];
  settings.set("trainlint.interpreter", python);
  settings.set("trainlint.severity.warn", "information");
  const ext = require(bundle);
  const ctx = context();
  await ext.activate(ctx);
  t.after(() => shutdown(ext, ctx));

  const log = Uri.file(path.join(ws, "lr_hot", "trainer_state.json"));
  docEvents.open.fire(textDocument(log, fs.readFileSync(log.fsPath, "utf8"), "json"));
  const diags = await until(() => stub.languages.getDiagnostics(log).length && stub.languages.getDiagnostics(log),
    "diagnostics for lr_hot");
  const div = diags.find((d) => d.code && d.code.value === "TP-DIVERGE");
  assert.ok(div, JSON.stringify(diags.map((d) => d.code)));
  assert.equal(div.range.start.line, 428);
  assert.equal(div.range.start.character, 14);
  assert.equal(div.severity, stub.DiagnosticSeverity.Error);
  assert.equal(div.source, "trainlint");
  assert.ok(String(div.code.target).endsWith("docs/rules/TP-DIVERGE.md"), String(div.code.target));
  assert.equal(div.relatedInformation.length, 2, JSON.stringify(div.relatedInformation));
  assert.equal(div.relatedInformation[0].location.range.start.line, 15);
  assert.match(div.relatedInformation[0].message, /^minimum:/);
  // trainlint.severity.warn reached the server: the spike is Information, not Warning
  const spike = diags.find((d) => d.code && d.code.value === "TP-GRAD-SPIKE");
  assert.equal(spike.severity, stub.DiagnosticSeverity.Information);

  // an event file opened as text: the virtual document is the server's rendering
  const member = fs.readdirSync(path.join(ws, "tb", "tensorboard_logs"))[0];
  const eventFile = Uri.file(path.join(ws, "tb", "tensorboard_logs", member));
  const doc = await stub.workspace.openTextDocument(Uri.parse(`trainlint-events://${eventFile.path}`));
  assert.match(doc.getText(), /^# trainlint view of events\.out\.tfevents/);
  assert.ok(doc.getText().split("\n").length > 200);
  await until(() => recorded.statusItems.some((i) => /trainlint: (FAIL|WARN)/.test(i.text)), "status bar verdict");
  // the tooltip names the worst log; a click opens the Problems view
  const item = recorded.statusItems.find((i) => /trainlint: FAIL/.test(i.text));
  assert.ok(item, recorded.statusItems.map((i) => i.text).join(", "));
  assert.match(item.tooltip, /FAIL in .*trainer_state\.json/);
  assert.equal(item.command, "trainlint.showProblems");
  // curves: the command, the event-file editor and the Explorer badge of the FAIL
  assert.ok(recorded.commands.has("trainlint.showCurves"));
  assert.deepEqual((recorded.customEditors || []).map(([v]) => v), ["trainlint.eventFile"]);
  const badge = recorded.decorations.provideFileDecoration(log);
  assert.equal(badge && badge.args[0], "F");
  // the output channel says what happened
  assert.ok(recorded.output.lines.some((l) => /settings \{/.test(l)), recorded.output.lines.join("\n"));
  assert.ok(recorded.output.lines.some((l) => /server running/.test(l)));
});

test("an interpreter without trainlint gets the exact command to run", async (t) => {
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-bare-"));
  const fake = path.join(bare, "python");
  fs.writeFileSync(fake, "#!/bin/sh\necho 'ModuleNotFoundError: No module named trainlint' >&2\nexit 1\n", { mode: 0o755 });
  settings.set("trainlint.interpreter", fake);
  recorded.messages.length = 0;
  delete require.cache[require.resolve(bundle)];
  const ext = require(bundle);
  const ctx = context();
  await ext.activate(ctx);
  t.after(() => shutdown(ext, ctx));
  // the status bar never claims "no findings" while no server runs
  assert.ok(recorded.statusItems.every((it) => !/no findings/.test(it.text)), JSON.stringify(recorded.statusItems.map((it) => it.text)));
  assert.ok(recorded.statusItems.some((it) => /trainlint: not installed/.test(it.text)));
  const msg = recorded.messages.find(([kind]) => kind === "error");
  assert.ok(msg, JSON.stringify(recorded.messages));
  assert.match(msg[1], new RegExp(`${fake.replace(/[/.]/g, "\\$&")} -m pip install trainlint`));
});
