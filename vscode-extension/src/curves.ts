// The curves view (trainlint.showCurves: a webview beside the log), the event-file editor (a read-only custom
// editor for *tfevents* files with the same charts) and the Explorer badges fed by the findings. The charts are
// media/curves.js on uPlot (bundled: no network), drawn from the server's `trainlint/curves` answer.
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

export const EVENTS_SCHEME = "trainlint-events";
const REFRESH_MS = 1500;

interface Point { path: string; line: number | null; record: number | null }

export function eventsUri(file: vscode.Uri): vscode.Uri {
  return vscode.Uri.parse(`${EVENTS_SCHEME}://${file.path}`);
}

function nonce(): string {
  let s = "";
  for (let i = 0; i < 24; i++) s += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(Math.random() * 62)];
  return s;
}

function html(webview: vscode.Webview, media: vscode.Uri, buttons: { id: string; label: string }[]): string {
  const src = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(media, f)).toString();
  const n = nonce();
  return `<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource} 'unsafe-inline'; script-src 'nonce-${n}';">
<link rel="stylesheet" href="${src("uPlot.min.css")}"><link rel="stylesheet" href="${src("curves.css")}">
</head><body><div id="tl-root">trainlint: reading the curves…</div>
<script nonce="${n}" src="${src("uPlot.iife.min.js")}"></script>
<script nonce="${n}" src="${src("curves.js")}"></script>
<script nonce="${n}">
const vscode = acquireVsCodeApi();
const root = document.getElementById("tl-root");
const buttons = ${JSON.stringify(buttons)}.map((b) => ({ id: b.id, label: b.label,
  run: () => vscode.postMessage({ type: "button", id: b.id }) }));
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m.type === "data") {
    TrainlintCurves.render(root, [m.doc], { buttons, onPoint: (p) => vscode.postMessage({ type: "jump", ...p }) });
    document.body.dataset.ready = String(Date.now());
  } else if (m.type === "error") {
    root.textContent = m.text;
  }
});
vscode.postMessage({ type: "ready" });
</script></body></html>`;
}

/** Feeds one webview with the curves of ``file`` and follows it as it grows; a click opens the log on its line. */
function attach(panel: vscode.WebviewPanel, file: vscode.Uri, media: vscode.Uri, client: () => LanguageClient | undefined,
  log: vscode.LogOutputChannel, buttons: { id: string; label: string; run: () => unknown }[] = []): vscode.Disposable {
  panel.webview.options = { enableScripts: true, localResourceRoots: [media] };
  panel.webview.html = html(panel.webview, media, buttons.map(({ id, label }) => ({ id, label })));
  let last = "";
  let busy = false;
  const refresh = async () => {
    const c = client();
    if (!c || busy || !panel.visible) return;
    busy = true;
    try {
      const doc = await c.sendRequest<unknown>("trainlint/curves", { uri: file.toString() });
      const text = JSON.stringify(doc);
      if (text !== last) {
        last = text;
        await panel.webview.postMessage({ type: "data", doc });
      }
    } catch (e) {
      log.warn(`trainlint: curves of ${file.fsPath}: ${e}`);
      await panel.webview.postMessage({ type: "error", text: `trainlint: ${e}` });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  const subs = [
    panel.webview.onDidReceiveMessage(async (m: { type: string; id?: string } & Point) => {
      if (m.type === "ready") { last = ""; await refresh(); }
      if (m.type === "button") buttons.find((b) => b.id === m.id)?.run();
      if (m.type === "jump") await jump(m);
    }),
    panel.onDidChangeViewState(() => { if (panel.visible) { last = ""; void refresh(); } }),
    vscode.languages.onDidChangeDiagnostics(() => void refresh()),
  ];
  const d = new vscode.Disposable(() => { clearInterval(timer); subs.forEach((s) => s.dispose()); });
  panel.onDidDispose(() => d.dispose());
  return d;
}

/** Open the log (an event file: its text view) with the cursor on the point's line. */
async function jump(p: Point): Promise<void> {
  if (!p.line) return;
  const file = vscode.Uri.file(p.path);
  const target = p.record !== null && p.record !== undefined ? eventsUri(file) : file;
  const doc = await vscode.workspace.openTextDocument(target);
  const pos = new vscode.Position(Math.max(0, p.line - 1), 0);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false,
    selection: new vscode.Range(pos, pos) });
}

function fileOf(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === "string") return vscode.Uri.parse(arg);
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: vscode.Uri } | undefined;
  const uri = vscode.window.activeTextEditor?.document.uri ?? tab?.uri;
  if (uri && uri.scheme === EVENTS_SCHEME) return vscode.Uri.file(uri.path);
  return uri;
}

/** Explorer badges: F (error colour) for a file with a FAIL, W for a WARN; event files' findings live on their
 * text view, so they are moved to the file. Colours propagate to the folders above. */
class Badges implements vscode.FileDecorationProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.emitter.event;
  private worst = new Map<string, number>();

  refresh(): void {
    const next = new Map<string, number>();
    for (const [uri, diags] of vscode.languages.getDiagnostics()) {
      let w = 9;
      for (const d of diags) if (d.source === "trainlint" && d.severity < w) w = d.severity;
      if (w > 1) continue;
      const file = uri.scheme === EVENTS_SCHEME ? vscode.Uri.file(uri.path) : uri;
      if (file.scheme !== "file") continue;
      const key = file.toString();
      next.set(key, Math.min(next.get(key) ?? 9, w));
    }
    const changed = new Set<string>();
    for (const [k, v] of next) if (this.worst.get(k) !== v) changed.add(k);
    for (const k of this.worst.keys()) if (!next.has(k)) changed.add(k);
    this.worst = next;
    if (changed.size) this.emitter.fire([...changed].map((k) => vscode.Uri.parse(k)));
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    const w = this.worst.get(uri.toString());
    if (w === undefined) return undefined;
    const d = w === 0
      ? new vscode.FileDecoration("F", "trainlint: FAIL", new vscode.ThemeColor("list.errorForeground"))
      : new vscode.FileDecoration("W", "trainlint: WARN", new vscode.ThemeColor("list.warningForeground"));
    d.propagate = true;
    return d;
  }
}

export function registerCurves(context: vscode.ExtensionContext, client: () => LanguageClient | undefined,
  log: vscode.LogOutputChannel, logPatterns: string[]): void {
  const media = vscode.Uri.joinPath(context.extensionUri, "media");
  const panels = new Map<string, vscode.WebviewPanel>();
  const badges = new Badges();
  context.subscriptions.push(
    vscode.commands.registerCommand("trainlint.showCurves", (arg?: unknown) => {
      const file = fileOf(arg);
      if (!file) { void vscode.window.showInformationMessage("trainlint: open a training log first"); return; }
      const key = file.toString();
      const open = panels.get(key);
      if (open) { open.reveal(vscode.ViewColumn.Beside, true); return; }
      const panel = vscode.window.createWebviewPanel("trainlint.curves", `Curves: ${file.path.split("/").pop()}`,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: true,
          localResourceRoots: [media] });
      panels.set(key, panel);
      panel.onDidDispose(() => panels.delete(key));
      log.info(`trainlint: curves of ${file.fsPath}`);
      context.subscriptions.push(attach(panel, file, media, client, log));
    }),
    vscode.window.registerCustomEditorProvider("trainlint.eventFile", {
      openCustomDocument: (uri: vscode.Uri) => ({ uri, dispose: () => undefined }),
      resolveCustomEditor: (doc: vscode.CustomDocument, panel: vscode.WebviewPanel) => {
        log.info(`trainlint: event file editor for ${doc.uri.fsPath}`);
        context.subscriptions.push(attach(panel, doc.uri, media, client, log, [{ id: "text", label: "Open as text",
          run: () => vscode.commands.executeCommand("trainlint.openEventsAsText", doc.uri) }]));
      },
    } as vscode.CustomReadonlyEditorProvider, { supportsMultipleEditorsPerDocument: true }),
    vscode.window.registerFileDecorationProvider(badges),
    vscode.languages.onDidChangeDiagnostics(() => badges.refresh()),
    vscode.languages.registerCodeLensProvider(logPatterns.map((pattern) => ({ scheme: "file", pattern })), {
      provideCodeLenses: (doc: vscode.TextDocument) => [new vscode.CodeLens(new vscode.Range(0, 0, 0, 0),
        { title: "$(graph) Show Curves", command: "trainlint.showCurves", arguments: [doc.uri] })],
    }),
  );
}

/** A trusted "Show curves" link under the server's hover (command links need a trusted MarkdownString). */
export function curvesLink(uri: vscode.Uri): vscode.MarkdownString {
  const args = encodeURIComponent(JSON.stringify([uri.toString()]));
  const md = new vscode.MarkdownString(`[$(graph) Show curves](command:trainlint.showCurves?${args})`, true);
  md.isTrusted = { enabledCommands: ["trainlint.showCurves"] };
  return md;
}
