// Load modules with `require("vscode")` answered by the stub, and compile TypeScript sources for tests.
"use strict";
const Module = require("node:module");
const path = require("node:path");
const fs = require("node:fs");
const os = require("node:os");
const { buildSync } = require("esbuild");

const stub = require("./vscode-stub.cjs");
const originalLoad = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === "vscode") return stub;
  return originalLoad.call(this, request, parent, isMain);
};

function compileTs(rel) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-ext-")), path.basename(rel, ".ts") + ".cjs");
  buildSync({ entryPoints: [path.join(__dirname, "..", "..", rel)], outfile: out, bundle: true, format: "cjs",
    platform: "node", external: ["vscode"], logLevel: "silent" });
  return require(out);
}

module.exports = { stub, compileTs, root: path.join(__dirname, "..", "..") };
