// The VS Code client: finds Python, starts `trainlint serve`, shows event files as text.
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import {
  bundledVersion, chooseLaunch, IMPORT_CHECK, installHint, privateEnvInstall, privateEnvPython, PythonApi,
  resolveInterpreter, SCANNER_CHECK, serverCommand, wheelMarker,
} from "./interpreter";
import { curvesLink, EVENTS_SCHEME, eventsUri, registerCurves } from "./curves";
import { DOCUMENT_PATTERNS, readSettings, RESTART_KEYS, userValue, worstVerdict } from "./settings";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
let restarting: Promise<void> = Promise.resolve();
let restartQueued = false;
let running = false;
// What the client is doing, for the status bar: never "no findings" while nothing is judging.
let phase: "starting" | "restarting" | "running" | "stopped" = "starting";
let judgedSince = 0; // when the server started running (its first findings take a moment)
const eventViews = new vscode.EventEmitter<vscode.Uri>();

/** A setting that names a program to run: the user's own value only (see EXECUTABLE_KEYS). */
function userSetting<T>(key: string, fallback: T): T {
  return userValue<T>(config().inspect<T>(key), fallback);
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("trainlint");
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  try {
    return (ext.isActive ? ext.exports : await ext.activate()) as PythonApi;
  } catch {
    return undefined;
  }
}

function canImport(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(python, IMPORT_CHECK, { timeout: 30000 }, (err, _stdout, stderr) => {
      resolve(err ? (stderr || String(err)).trim().split("\n").slice(-1)[0] : undefined);
    });
  });
}

type Level = "error" | "warning" | "info";

/** A notification, as trainlint.showNotifications allows; the output channel gets every message regardless. */
async function notify(level: Level, message: string, ...items: string[]): Promise<string | undefined> {
  output.appendLine(`trainlint: ${message}`);
  const when = config().get<string>("showNotifications", "onError");
  const shown = when === "always" || (when === "onWarning" && level !== "info") || (when === "onError" && level === "error");
  if (!shown) return undefined;
  const show = level === "error" ? vscode.window.showErrorMessage
    : level === "warning" ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(message, ...items);
}

/** The wheels in the .vsix's bundled/ folder: the pure one, and the compiled ones pip may prefer. */
function bundledWheels(context: vscode.ExtensionContext): string[] {
  const dir = path.join(context.extensionPath, "bundled");
  const found = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^trainlint-.*\.whl$/.test(f)).sort() : [];
  return found.map((f) => path.join(dir, f));
}

/** The private environment's python, if it was made from this very set of wheels. */
function privatePython(context: vscode.ExtensionContext, wheels: string[]): string | undefined {
  if (wheels.length === 0) return undefined;
  const storage = context.globalStorageUri.fsPath;
  const py = privateEnvPython(storage);
  const marker = path.join(storage, "venv", ".trainlint-wheel");
  try {
    return fs.existsSync(py) && fs.readFileSync(marker, "utf8").trim() === wheelMarker(wheels) ? py : undefined;
  } catch {
    return undefined;
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    output.appendLine(`trainlint: $ ${command} ${args.join(" ")}`);
    const child = spawn(command, args, { env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } });
    child.stdout.on("data", (d) => output.append(String(d)));
    child.stderr.on("data", (d) => output.append(String(d)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} exited with ${code}`))));
  });
}

/**
 * Create the private environment from the bundled wheels (pip picks the one that fits the interpreter; the
 * dependencies come from the package index).
 */
async function createPrivateEnv(context: vscode.ExtensionContext, python: string, wheels: string[]): Promise<string> {
  const storage = context.globalStorageUri.fsPath;
  const py = privateEnvPython(storage);
  const version = bundledVersion(wheels);
  if (!version) throw new Error(`no trainlint wheel among ${wheels.join(", ")}`);
  const dir = path.dirname(wheels[0]);
  fs.mkdirSync(storage, { recursive: true });
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "trainlint",
    cancellable: false }, async (progress) => {
    progress.report({ message: "creating a private Python environment…" });
    await run(python, ["-P", "-m", "venv", "--clear", path.join(storage, "venv")]);
    progress.report({ message: `installing trainlint ${version} and its dependencies…` });
    const pinned = path.join(dir, "requirements.txt");
    for (const [command, args] of privateEnvInstall(py, dir, version, fs.existsSync(pinned) ? pinned : undefined)) {
      await run(command, args);
    }
    await run(py, SCANNER_CHECK); // says in the output whether the compiled scanner came with the wheel pip chose
    fs.writeFileSync(path.join(storage, "venv", ".trainlint-wheel"), wheelMarker(wheels));
  });
  return py;
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const resolved = resolveInterpreter(userSetting<string | string[]>("interpreter", []), await pythonApi(), folder);
  const wheels = bundledWheels(context);
  const problem = await canImport(resolved.python);
  let launch = chooseLaunch({
    path: userSetting<string[]>("path", []), importStrategy: config().get<string>("importStrategy", "useBundled"),
    interpreter: resolved, interpreterHasTrainlint: problem === undefined, privatePython: privatePython(context, wheels),
    bundledWheels: wheels,
  });
  if (launch.kind === "offer-private-env") {
    output.appendLine(`trainlint: ${resolved.python} cannot import trainlint: ${problem}`);
    const pick = await vscode.window.showInformationMessage(
      `trainlint is not installed for ${resolved.python}. Create a private environment for it in the extension's ` +
      "storage (the bundled trainlint and its dependencies from the package index)?", "Create environment",
      "Open settings");
    if (pick === "Create environment") {
      try {
        launch = { kind: "python", python: await createPrivateEnv(context, launch.python, launch.wheels),
          source: "private environment" };
      } catch (e) {
        await notify("error", `Could not create trainlint's environment: ${e}. See the output for pip's message.`);
        launch = { kind: "missing", python: resolved.python };
      }
    } else {
      if (pick === "Open settings") await vscode.commands.executeCommand("workbench.action.openSettings", "trainlint");
      launch = { kind: "missing", python: resolved.python };
    }
  }
  if (launch.kind === "missing") {
    const hint = installHint(resolved.python);
    output.appendLine(`trainlint: ${resolved.python} cannot import trainlint: ${problem}`);
    output.appendLine(`trainlint: run: ${hint}  (or set trainlint.interpreter / trainlint.path)`);
    const pick = await notify("error", `trainlint is not installed for ${resolved.python}. Run: ${hint}`,
      "Copy command", "Open settings");
    if (pick === "Copy command") await vscode.env.clipboard.writeText(hint);
    if (pick === "Open settings") await vscode.commands.executeCommand("workbench.action.openSettings", "trainlint");
    running = false;
    phase = "stopped";
    updateStatus();
    status.text = "$(error) trainlint: not installed — see output";
    return;
  }
  const cmd = launch.kind === "path"
    ? { command: launch.command, args: [...launch.args, "serve", ...userSetting<string[]>("args", [])] }
    : serverCommand(launch.python, userSetting<string[]>("args", []));
  output.appendLine(`trainlint: starting ${cmd.command} ${cmd.args.join(" ")}` +
    (launch.kind === "python" ? ` (${launch.source})` : " (trainlint.path)"));
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { env: { ...process.env, PYTHONUNBUFFERED: "1" } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      ...DOCUMENT_PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
      { scheme: EVENTS_SCHEME },
    ],
    initializationOptions: settingsNow(),
    synchronize: { configurationSection: "trainlint" },
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      // the server's hover, then a link to the curves view (a command link needs a trusted MarkdownString)
      provideHover: async (doc, pos, token, next) => {
        const h = await next(doc, pos, token);
        if (!h) return h;
        const file = doc.uri.scheme === EVENTS_SCHEME ? vscode.Uri.file(doc.uri.path) : doc.uri;
        return new vscode.Hover([...h.contents, curvesLink(file)], h.range);
      },
    },
  };
  client = new LanguageClient("trainlint", "trainlint", serverOptions, clientOptions);
  const c = client;
  context.subscriptions.push(c.onDidChangeState((e) => {
    if (c !== client) return;
    running = e.newState === State.Running;
    if (running) judgedSince = Date.now();
    phase = running ? "running" : e.newState === State.Starting ? (phase === "restarting" ? "restarting" : "starting")
      : "stopped";
    output.info(`trainlint: server ${phase}`);
    updateStatus();
    if (running) setTimeout(updateStatus, FIRST_FINDINGS_MS + 100);
  }));
  try {
    await c.start();
  } catch (e) {
    output.appendLine(`trainlint: the server did not start: ${e}`);
    running = false;
    phase = "stopped";
    updateStatus();
    throw e;
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    output.info("trainlint: stopping the server");
    await c.stop();
    output.info("trainlint: server stopped");
  }
}

function settingsNow() {
  const s = readSettings((k, d) => config().get(k, d));
  output.info(`trainlint: settings ${JSON.stringify(s)}`);
  return s;
}

/** Restart, coalesced: a restart asked for during one queues exactly one more. */
function restart(context: vscode.ExtensionContext): Promise<void> {
  if (restartQueued) return restarting;
  restartQueued = true;
  phase = "restarting";
  running = false;
  updateStatus();
  restarting = restarting.then(async () => {
    restartQueued = false;
    await stop();
    await start(context);
  }).catch((e) => output.appendLine(`trainlint: restart failed: ${e}`));
  return restarting;
}

const FIRST_FINDINGS_MS = 5000;

function updateStatus(): void {
  if (!running) {
    // Never "no findings" while nothing is judging: that would be a silent PASS.
    if (phase === "starting" || phase === "restarting") {
      status.text = `$(sync~spin) trainlint: ${phase}`;
      status.tooltip = `The trainlint server is ${phase}; findings follow once it has judged the logs.`;
      status.command = "trainlint.showOutput";
      return;
    }
    status.text = "$(error) trainlint: server stopped — see output";
    status.tooltip = "The trainlint server is not running. Click to restart it; the output has the reason.";
    status.command = "trainlint.restart";
    return;
  }
  status.command = "trainlint.showProblems";
  const sev: number[] = [];
  let worst: [number, vscode.Uri] | undefined;
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    for (const d of diags) {
      if (d.source !== "trainlint") continue;
      sev.push(d.severity);
      if (!worst || d.severity < worst[0]) worst = [d.severity, uri];
    }
  }
  const verdict = worstVerdict(sev);
  if (!sev.length && Date.now() - judgedSince < FIRST_FINDINGS_MS) {
    status.text = "$(sync~spin) trainlint: judging";
    status.tooltip = "The server is reading and judging the workspace's logs.";
    return;
  }
  status.text = `trainlint: ${verdict}`;
  const where = worst ? vscode.workspace.asRelativePath(worst[1].scheme === EVENTS_SCHEME
    ? vscode.Uri.file(worst[1].path) : worst[1]) : undefined;
  status.tooltip = where ? `Worst verdict: ${verdict} in ${where} (${sev.length} finding${sev.length === 1 ? "" : "s"}). `
    + "Click: the Problems view."
    : "No finding in this workspace's training logs. Click: the Problems view.";
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("trainlint", { log: true });
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  status.text = "trainlint: starting";
  status.command = "trainlint.showOutput";
  status.show();
  context.subscriptions.push(output, status, eventViews);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(EVENTS_SCHEME, {
      onDidChange: eventViews.event,
      async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
        if (!client) return "trainlint: the server is not running";
        const res = await client.sendRequest<{ text: string }>("trainlint/renderEvents", { uri: uri.toString() });
        return res.text;
      },
    }),
    vscode.commands.registerCommand("trainlint.restart", () => restart(context)),
    vscode.commands.registerCommand("trainlint.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("trainlint.showProblems", async () => {
      // The Problems view's filter text has no API (typing into it could land in an editor: a user's log), so
      // the view opens unfiltered; its entries name their source, trainlint.
      await vscode.commands.executeCommand("workbench.actions.view.problems");
    }),
    // trainlint.rescan is the server's command: vscode-languageclient registers it from the server's
    // executeCommandProvider. Registering it here too makes VS Code refuse the second registration and
    // the client fail to start.
    vscode.commands.registerCommand("trainlint.openEventsAsText", async (arg?: vscode.Uri) => {
      // An event file is binary: VS Code opens it in a tab without a text editor, so look at the tab too.
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: vscode.Uri } | undefined;
      let file = arg ?? vscode.window.activeTextEditor?.document.uri ?? tab?.uri;
      if (!file || !(file.path.includes("tfevents") || file.path.endsWith(".db"))) {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Open as text",
          filters: { "TensorBoard event files": ["*"] } });
        file = picked?.[0];
      }
      if (!file) return;
      const doc = await vscode.workspace.openTextDocument(eventsUri(file));
      await vscode.window.showTextDocument(doc, { preview: false });
    }),
    vscode.languages.onDidChangeDiagnostics(() => updateStatus()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) void restart(context);
      else if (e.affectsConfiguration("trainlint")) settingsNow();
    }),
  );
  registerCurves(context, () => (running ? client : undefined), output, [...DOCUMENT_PATTERNS]);
  try {
    await start(context);
  } catch {
    // reported in the output channel and the status bar; the restart command tries again
  }
}

export async function deactivate(): Promise<void> {
  await stop();
}
