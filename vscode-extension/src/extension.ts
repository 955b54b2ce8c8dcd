// The VS Code client: finds Python, starts `trainlint serve`, shows event files as text.
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { IMPORT_CHECK, installHint, PythonApi, resolveInterpreter, serverCommand } from "./interpreter";
import { DOCUMENT_PATTERNS, readSettings, RESTART_KEYS, worstVerdict } from "./settings";

const EVENTS_SCHEME = "trainlint-events";
let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let restarting: Promise<void> = Promise.resolve();
let restartQueued = false;
let running = false;
const eventViews = new vscode.EventEmitter<vscode.Uri>();

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

async function start(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const resolved = resolveInterpreter(config().get<string | string[]>("interpreter", []), await pythonApi(), folder);
  output.appendLine(`trainlint: using ${resolved.python} (${resolved.source})`);
  const problem = await canImport(resolved.python);
  if (problem) {
    const hint = installHint(resolved.python);
    output.appendLine(`trainlint: ${resolved.python} cannot import trainlint: ${problem}`);
    output.appendLine(`trainlint: run: ${hint}  (or set trainlint.interpreter)`);
    const pick = await vscode.window.showErrorMessage(
      `trainlint is not installed for ${resolved.python}. Run: ${hint}`, "Copy command", "Open settings");
    if (pick === "Copy command") await vscode.env.clipboard.writeText(hint);
    if (pick === "Open settings") await vscode.commands.executeCommand("workbench.action.openSettings", "trainlint.interpreter");
    running = false;
    updateStatus();
    status.text = "$(error) trainlint: not installed — see output";
    return;
  }
  const cmd = serverCommand(resolved.python, config().get<string[]>("args", []));
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
    initializationOptions: readSettings((k, d) => config().get(k, d)),
    synchronize: { configurationSection: "trainlint" },
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  client = new LanguageClient("trainlint", "trainlint", serverOptions, clientOptions);
  const c = client;
  context.subscriptions.push(c.onDidChangeState((e) => {
    if (c !== client) return;
    running = e.newState === State.Running;
    updateStatus();
  }));
  try {
    await c.start();
  } catch (e) {
    output.appendLine(`trainlint: the server did not start: ${e}`);
    running = false;
    updateStatus();
    throw e;
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop();
}

/** Restart, coalesced: a restart asked for during one queues exactly one more. */
function restart(context: vscode.ExtensionContext): Promise<void> {
  if (restartQueued) return restarting;
  restartQueued = true;
  restarting = restarting.then(async () => {
    restartQueued = false;
    await stop();
    await start(context);
  }).catch((e) => output.appendLine(`trainlint: restart failed: ${e}`));
  return restarting;
}

function updateStatus(): void {
  if (!running) {
    // Never "no findings" while nothing is judging: that would be a silent PASS.
    status.text = "$(error) trainlint: server stopped — see output";
    status.tooltip = "The trainlint server is not running. Click to restart it; the output has the reason.";
    status.command = "trainlint.restart";
    return;
  }
  status.command = "trainlint.showOutput";
  const sev: number[] = [];
  for (const [, diags] of vscode.languages.getDiagnostics()) {
    for (const d of diags) if (d.source === "trainlint") sev.push(d.severity);
  }
  const verdict = worstVerdict(sev);
  status.text = `trainlint: ${verdict}`;
  status.tooltip = "Worst verdict of the training logs in this workspace";
}

function eventsUri(file: vscode.Uri): vscode.Uri {
  return vscode.Uri.parse(`${EVENTS_SCHEME}://${file.path}`);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("trainlint");
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
    // trainlint.rescan is the server's command: vscode-languageclient registers it from the server's
    // executeCommandProvider. Registering it here too makes VS Code refuse the second registration and
    // the client fail to start.
    vscode.commands.registerCommand("trainlint.openEventsAsText", async (arg?: vscode.Uri) => {
      // An event file is binary: VS Code opens it in a tab without a text editor, so look at the tab too.
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: vscode.Uri } | undefined;
      let file = arg ?? vscode.window.activeTextEditor?.document.uri ?? tab?.uri;
      if (!file || !file.path.includes("tfevents")) {
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
    }),
  );
  try {
    await start(context);
  } catch {
    // reported in the output channel and the status bar; the restart command tries again
  }
}

export async function deactivate(): Promise<void> {
  await stop();
}
