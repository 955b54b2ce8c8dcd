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

/** The command line that starts the server over stdio. */
export function serverCommand(python: string, args: string[] | undefined): { command: string; args: string[] } {
  return { command: python, args: ["-m", "trainlint.cli", "serve", ...(args ?? [])] };
}

/** What to tell a user whose interpreter lacks trainlint: the exact command to run. */
export function installHint(python: string): string {
  const quoted = /\s/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install trainlint`;
}

/** The probe run before starting: imports the server module without starting it. */
export const IMPORT_CHECK = ["-c", "import trainlint.lsp.server"];
