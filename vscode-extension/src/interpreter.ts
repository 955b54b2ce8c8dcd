// Which Python runs the server: pure logic, no `vscode` import, so it is unit-tested directly.

export interface PythonApi {
  environments?: { getActiveEnvironmentPath?: (resource?: unknown) => { path?: string } | undefined };
  settings?: { getExecutionDetails?: (resource?: unknown) => { execCommand?: string[] } | undefined };
}

export interface Resolved {
  python: string;
  source: "setting" | "python-extension" | "default";
}

/** The `trainlint.interpreter` setting, else the Python extension's environment, else python3. */
export function resolveInterpreter(setting: string | string[] | undefined, api: PythonApi | undefined,
  resource?: unknown): Resolved {
  // An array, as Microsoft's Python-tool extensions name it; a plain string from older settings still works.
  const first = (Array.isArray(setting) ? setting[0] : setting)?.trim();
  if (first) {
    return { python: first, source: "setting" };
  }
  const active = api?.environments?.getActiveEnvironmentPath?.(resource)?.path;
  if (active && active.trim() !== "") {
    return { python: active, source: "python-extension" };
  }
  const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
  if (exec && exec.length > 0 && exec[0]) {
    return { python: exec[0], source: "python-extension" };
  }
  return { python: "python3", source: "default" };
}

/**
 * The command line that starts the server over stdio. `-P` (Python 3.11+, as trainlint requires): the working
 * folder is not put on sys.path, so a workspace's own `trainlint/` or `trainlint.py` is never imported instead of
 * the installed package.
 */
export function serverCommand(python: string, args: string[] | undefined): { command: string; args: string[] } {
  return { command: python, args: ["-P", "-m", "trainlint.cli", "serve", ...(args ?? [])] };
}

/** What to tell a user whose interpreter lacks trainlint: the exact command to run. */
export function installHint(python: string): string {
  const quoted = /\s/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install trainlint`;
}

/** The probe run before starting: imports the server module without starting it. */
export const IMPORT_CHECK = ["-P", "-c", "import trainlint.lsp.server"];

/** What launches the server, chosen as Microsoft's Python-tool extensions choose it. */
export type Launch =
  | { kind: "path"; command: string; args: string[] }
  | { kind: "python"; python: string; source: string }
  | { kind: "offer-private-env"; python: string; wheels: string[] }
  | { kind: "missing"; python: string };

export interface LaunchInputs {
  path: string[];                 // trainlint.path: an executable (and its first arguments)
  importStrategy: string;         // "useBundled" | "fromEnvironment"
  interpreter: Resolved;          // the resolved interpreter
  interpreterHasTrainlint: boolean;
  privatePython?: string;         // the private environment's python, when it holds the bundled version
  bundledWheels?: string[];       // the wheels shipped inside the .vsix (pure, and compiled for some platforms)
}

/**
 * trainlint.path wins. With "useBundled" (the default) the private environment made from the bundled wheel is
 * used when it exists, else the interpreter's own trainlint, else the extension offers to create the private
 * environment. With "fromEnvironment" only the interpreter counts.
 */
export function chooseLaunch(i: LaunchInputs): Launch {
  const p = i.path.filter((x) => x.trim() !== "");
  if (p.length > 0) return { kind: "path", command: p[0], args: p.slice(1) };
  const bundled = i.importStrategy !== "fromEnvironment";
  if (bundled && i.privatePython) return { kind: "python", python: i.privatePython, source: "private environment" };
  if (i.interpreterHasTrainlint) return { kind: "python", python: i.interpreter.python, source: i.interpreter.source };
  if (bundled && i.bundledWheels?.length) {
    return { kind: "offer-private-env", python: i.interpreter.python, wheels: i.bundledWheels };
  }
  return { kind: "missing", python: i.interpreter.python };
}

/** The private environment's interpreter under the extension's storage folder. */
export function privateEnvPython(storageDir: string, platform: string = process.platform): string {
  return platform === "win32" ? `${storageDir}/venv/Scripts/python.exe` : `${storageDir}/venv/bin/python`;
}

const WHEEL = /^trainlint-([^-]+)-.+\.whl$/;

function baseName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

/**
 * The trainlint version the bundled wheels carry (`trainlint-VERSION-TAGS.whl`), which the private environment
 * asks pip for: the pure wheel's, which every .vsix has, else the first wheel's.
 */
export function bundledVersion(wheels: string[]): string | undefined {
  const names = wheels.map(baseName).filter((n) => WHEEL.test(n));
  const pick = names.find((n) => n.endsWith("-py3-none-any.whl")) ?? names[0];
  return pick ? WHEEL.exec(pick)?.[1] : undefined;
}

/**
 * What `.trainlint-wheel` in the private environment holds: the names of every bundled wheel, sorted, one a line.
 * The environment is made again when it differs, so a .vsix that adds, drops or changes any wheel (a new version,
 * a compiled wheel where there was none) replaces the one pip chose before.
 */
export function wheelMarker(wheels: string[]): string {
  return wheels.map(baseName).sort().join("\n");
}

/**
 * The pip runs that fill the private environment from the folder of bundled wheels. pip picks the wheel: with
 * `--no-index --find-links` the only candidates for `trainlint==VERSION` are the bundled files, and pip takes the
 * one whose tags fit this Python best: the compiled wheel where its Python version, platform and glibc match, the
 * pure `py3-none-any` one everywhere else. With the pinned list made when the wheels were bundled
 * (`requirements.txt`: each dependency `==` a version, with the sha256 of every file the index has for it), pip
 * installs exactly those files (`--require-hashes`), then trainlint alone (`--no-deps`); without one (a development
 * build), trainlint from the folder, then its dependencies as declared, from the index (trainlint itself is then
 * already installed, so the index's is never taken).
 */
export function privateEnvInstall(py: string, bundledDir: string, version: string,
  requirements: string | undefined): [string, string[]][] {
  const trainlint: [string, string[]] =
    [py, ["-P", "-m", "pip", "install", "--no-deps", "--no-index", "--find-links", bundledDir, `trainlint==${version}`]];
  if (!requirements) return [trainlint, [py, ["-P", "-m", "pip", "install", `trainlint==${version}`]]];
  return [[py, ["-P", "-m", "pip", "install", "--require-hashes", "-r", requirements]], trainlint];
}

/** Run in the private environment once it is made: its output says whether the compiled scanner loaded, and why not. */
export const SCANNER_CHECK = ["-P", "-c", "from trainlint.core import accel; print('trainlint:', accel.REASON)"];
