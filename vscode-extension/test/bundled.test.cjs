// The packaged .vsix's wheels, installed the way the extension installs them (the same pip runs, from the .vsix's
// own bundled/ folder, by the pip a fresh venv of TRAINLINT_PYTHON has): on this machine the private environment
// gets the compiled scanner, and for another Python or platform pip takes the pure wheel. Needs the packaged .vsix:
// `make extension` runs this file after `vsce package` with TRAINLINT_CHECK_VSIX=1; elsewhere it is skipped.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { compileTs, root } = require("./helpers/load.cjs");

const m = compileTs("src/interpreter.ts");
const python = process.env.TRAINLINT_PYTHON || "python3";
const skip = process.env.TRAINLINT_CHECK_VSIX ? false
  : "needs the packaged .vsix: make extension runs it after vsce package (TRAINLINT_CHECK_VSIX=1)";
const PURE = /-py3-none-any\.whl$/;

function sh(command, args, what) {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 600_000,
    env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", TRAINLINT_PURE: "" } });
  assert.equal(r.status, 0, `${what}: ${command} ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The .vsix's extension/bundled/ folder, unpacked: exactly what an installed extension has. */
function unpackBundled(tmp) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const vsix = path.join(root, `trainlint-${version}.vsix`);
  assert.ok(fs.existsSync(vsix), `${vsix} is not there: vsce package makes it`);
  sh(python, ["-c", "import sys, zipfile\n" +
    "z = zipfile.ZipFile(sys.argv[1])\n" +
    "z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith('extension/bundled/')])", vsix, tmp],
  "unpacking the .vsix");
  return path.join(tmp, "extension", "bundled");
}

let unpacked; // once: { tmp, dir, wheels, version }
function bundled() {
  if (unpacked) return unpacked;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "trainlint-bundled-"));
  const dir = unpackBundled(tmp);
  // what bundledWheels() in extension.ts lists
  const wheels = fs.readdirSync(dir).filter((f) => /^trainlint-.*\.whl$/.test(f)).sort().map((f) => path.join(dir, f));
  unpacked = { tmp, dir, wheels, version: m.bundledVersion(wheels) };
  return unpacked;
}

let env; // made once: { dir, wheels, py, version }
function privateEnv() {
  if (env) return env;
  const { tmp, dir, wheels, version } = bundled();
  // what createPrivateEnv runs: venv, the pinned dependencies, trainlint from bundled/ (pip's choice)
  const venv = path.join(tmp, "venv");
  sh(python, ["-P", "-m", "venv", "--clear", venv], "the private environment's venv");
  const py = m.privateEnvPython(tmp);
  const pinned = path.join(dir, "requirements.txt");
  for (const [command, args] of m.privateEnvInstall(py, dir, version, fs.existsSync(pinned) ? pinned : undefined)) {
    sh(command, args, "the extension's install step");
  }
  env = { dir, wheels, py, version };
  return env;
}

/** The wheel pip takes from bundled/ for the extension's own install command, with `extra` options added. */
function pipChooses(extra) {
  const { dir, py, version } = privateEnv();
  const steps = m.privateEnvInstall(py, dir, version, path.join(dir, "requirements.txt"));
  const [command, args] = steps[steps.length - 1];
  const report = JSON.parse(sh(command, [...args, "--dry-run", "--quiet", "--report", "-", ...extra],
    `pip's choice with ${extra.join(" ")}`));
  assert.equal(report.install.length, 1, JSON.stringify(report.install));
  return report.install[0].download_info.url.split("/").pop();
}

test("the .vsix carries the pure wheel, this machine's compiled wheel and the pinned dependencies", { skip }, () => {
  const { dir, wheels, version } = bundled();
  const names = wheels.map((w) => path.basename(w));
  assert.equal(version, JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version);
  assert.equal(names.filter((n) => PURE.test(n)).length, 1, names.join(", "));
  const compiled = names.filter((n) => !PURE.test(n));
  assert.equal(compiled.length, 1, `one compiled wheel: ${names.join(", ")}`);
  const tag = sh(python, ["-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"], "tag").trim();
  assert.match(compiled[0], new RegExp(`-${tag}-${tag}-`), "built for the Python that built it");
  if (process.platform === "linux") assert.match(compiled[0], /manylinux_2_\d+_/, "auditwheel's glibc tag");
  assert.match(fs.readFileSync(path.join(dir, "requirements.txt"), "utf8"), /--hash=sha256:/);
});

test("the private environment made from it on this machine has every compiled scanner", { skip }, () => {
  const { py, wheels } = privateEnv();
  const out = sh(py, m.SCANNER_CHECK, "the extension's scanner check");
  assert.match(out, /compiled scanner in use/, out);
  // every extension loaded, from the private environment (not the checkout), from the compiled wheel pip chose
  const probe = JSON.parse(sh(py, ["-P", "-c", [
    "import json, sys, importlib.metadata as md",
    "from trainlint.core import accel",
    "mods = {n: getattr(accel, n) for n in ('CSCAN', 'CJSONL', 'CTEXT', 'CSTDOUT', 'CLINES', 'CSTATS', 'CARRAY')}",
    "print(json.dumps({'prefix': sys.prefix, 'files': {n: m and m.__file__ for n, m in mods.items()},",
    "  'wheel': md.distribution('trainlint').read_text('WHEEL')}))"].join("\n")], "the accel probe"));
  for (const [name, file] of Object.entries(probe.files)) {
    assert.ok(file, `${name} did not load in the private environment`);
    assert.ok(file.startsWith(probe.prefix), `${name} came from ${file}, not the private environment`);
  }
  assert.doesNotMatch(probe.wheel, /Tag: py3-none-any/, "pip installed the pure wheel");
  // the installed WHEEL has one Tag line per platform tag of the compiled file's name (auditwheel's two)
  const [, , pyTag, abi, plats] = path.basename(wheels.find((w) => !PURE.test(w))).replace(/\.whl$/, "").split("-");
  for (const plat of plats.split(".")) assert.ok(probe.wheel.includes(`Tag: ${pyTag}-${abi}-${plat}`), probe.wheel);
});

test("pip takes the compiled wheel for this Python and the pure one for any other Python or platform", { skip }, () => {
  const { wheels } = privateEnv();
  const compiled = path.basename(wheels.find((w) => !PURE.test(w)));
  const pure = path.basename(wheels.find((w) => PURE.test(w)));
  assert.equal(pipChooses(["--ignore-installed"]), compiled, "this machine"); // (it is installed: ask again)
  const other = (opts) => ["--only-binary=:all:", "--target", fs.mkdtempSync(path.join(os.tmpdir(), "t-")), ...opts];
  assert.equal(pipChooses(other(["--python-version", "3.12"])), pure, "CPython 3.12");
  assert.equal(pipChooses(other(["--python-version", "3.13"])), pure, "CPython 3.13");
  if (process.platform !== "linux" || process.arch !== "x64") return;
  assert.equal(pipChooses(other(["--platform", "manylinux_2_17_x86_64"])), compiled, "a glibc 2.17 Linux");
  for (const platform of ["macosx_11_0_arm64", "macosx_10_9_x86_64", "win_amd64", "manylinux2014_aarch64",
    "musllinux_1_2_x86_64", "manylinux_2_5_x86_64"]) {
    assert.equal(pipChooses(other(["--platform", platform])), pure, platform);
  }
});
