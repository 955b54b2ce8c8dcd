// trainlint.* settings as the server reads them (initializationOptions and workspace/configuration).
import { SERVER_DEFAULTS } from "./settings.generated";

export type Getter = <T>(key: string, fallback: T) => T;

export interface ServerSettings {
  scope: string;
  severity: { fail: string; warn: string; info: string; notChecked: string };
  select: string[];
  ignore: string[];
  ignorePatterns: string[];
  debounceMs: number;
  maxDiagnosticsPerFile: number;
  watch: boolean;
  pullDiagnostics: boolean;
  lineBreaks: string;
}

/** Every server setting, read with the default the server declares (src/settings.generated.ts, from
 * server/trainlint/lsp/settings.py); the four `severity.*` settings travel as one object. */
export function readSettings(get: Getter): ServerSettings {
  const out: Record<string, unknown> = {};
  const severity: Record<string, unknown> = {};
  for (const [key, fallback] of Object.entries(SERVER_DEFAULTS)) {
    if (key.startsWith("severity.")) severity[key.slice("severity.".length)] = get(key, fallback);
    else out[key] = get(key, fallback);
  }
  return { ...out, severity } as unknown as ServerSettings;
}

/**
 * Settings that name a program the extension runs. `machine` scope (package.json) keeps them out of workspace
 * settings, and the extension reads them through `userValue`: a cloned repository's .vscode/settings.json must
 * not choose what runs on the user's machine.
 */
export const EXECUTABLE_KEYS = ["trainlint.interpreter", "trainlint.path", "trainlint.args"];

export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The user's own value of a setting (User settings), else its default: workspace values are ignored. */
export function userValue<T>(inspected: Inspected<T> | undefined, fallback: T): T {
  if (inspected?.globalValue !== undefined) return inspected.globalValue;
  if (inspected?.defaultValue !== undefined) return inspected.defaultValue;
  return fallback;
}

/** Settings whose change needs a new server process (the others are sent as a configuration change). */
export const RESTART_KEYS = ["trainlint.interpreter", "trainlint.args", "trainlint.path", "trainlint.importStrategy"];

/** The files the client attaches to (the server finds unopened logs on its own). */
export { DOCUMENT_PATTERNS } from "./formats.generated";

/** The worst verdict among diagnostics, for the status bar: Error -> FAIL, Warning -> WARN. */
export function worstVerdict(severities: number[]): string {
  if (severities.includes(0)) return "FAIL";
  if (severities.includes(1)) return "WARN";
  return severities.length ? "PASS" : "no findings";
}
