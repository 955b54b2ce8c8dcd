// A small stand-in for the `vscode` module: enough of the API for vscode-languageclient 9.0.1 and
// the extension to run in plain Node. It records what reaches it (diagnostics, messages, commands)
// so tests can assert on it. It does not render anything and its `languages.match` accepts every
// document (so the document selector globs are not tested here; see test/settings.test.cjs).
"use strict";
const { EventEmitter: NodeEmitter } = require("node:events");
const path = require("node:path");

class Disposable {
  constructor(fn) { this._fn = fn; }
  static from(...items) { return new Disposable(() => items.forEach((i) => i && i.dispose && i.dispose())); }
  dispose() { if (this._fn) { this._fn(); this._fn = undefined; } }
}

class EventEmitter {
  constructor() { this._e = new NodeEmitter(); this._e.setMaxListeners(0); }
  get event() {
    return (listener, thisArg, disposables) => {
      const fn = (v) => listener.call(thisArg, v);
      this._e.on("fire", fn);
      const d = new Disposable(() => this._e.off("fire", fn));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(v) { this._e.emit("fire", v); }
  dispose() { this._e.removeAllListeners(); }
}

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme; this.authority = authority || ""; this.path = p || ""; this.query = query || "";
    this.fragment = fragment || "";
  }
  static parse(value) {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!m) throw new Error(`bad uri ${value}`);
    return new Uri(m[1], m[2], decodeURIComponent(m[3]), m[4], m[5]);
  }
  static file(p) { return new Uri("file", "", path.resolve(p)); }
  static joinPath(base, ...parts) { return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...parts)); }
  static from(c) { return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment); }
  get fsPath() { return this.path; }
  with(c) { return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment); }
  toString() {
    const p = this.path.split("/").map(encodeURIComponent).join("/");
    return `${this.scheme}://${this.authority}${p}${this.query ? "?" + this.query : ""}`;
  }
  toJSON() { return { scheme: this.scheme, authority: this.authority, path: this.path, fsPath: this.fsPath }; }
}

class Position {
  constructor(line, character) { this.line = line; this.character = character; }
  isEqual(o) { return o.line === this.line && o.character === this.character; }
}
class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") { this.start = new Position(a, b); this.end = new Position(c, d); }
    else { this.start = a; this.end = b; }
  }
}
class Selection extends Range {}
class Location { constructor(uri, rangeOrPos) { this.uri = uri; this.range = rangeOrPos; } }
class Diagnostic {
  constructor(range, message, severity) { this.range = range; this.message = message; this.severity = severity ?? 0; }
}
class DiagnosticRelatedInformation { constructor(location, message) { this.location = location; this.message = message; } }
class MarkdownString {
  constructor(value = "", supportThemeIcons) { this.value = value; this.supportThemeIcons = supportThemeIcons; }
  appendMarkdown(v) { this.value += v; return this; }
  appendText(v) { this.value += v; return this; }
  appendCodeblock(v) { this.value += "\n```\n" + v + "\n```\n"; return this; }
}
class Hover { constructor(contents, range) { this.contents = Array.isArray(contents) ? contents : [contents]; this.range = range; } }
class ThemeColor { constructor(id) { this.id = id; } }
class FileDecoration { constructor(badge, tooltip, color) { this.badge = badge; this.tooltip = tooltip; this.color = color; this.args = [badge, tooltip, color]; } }
class CodeLens { constructor(range, command) { this.range = range; this.command = command; } }
class DocumentSymbol {
  constructor(name, detail, kind, range, selectionRange) {
    this.name = name; this.detail = detail; this.kind = kind; this.range = range; this.selectionRange = selectionRange; this.children = [];
  }
}
class SymbolInformation { constructor(name, kind, containerName, location) { Object.assign(this, { name, kind, containerName, location }); } }
class CancellationTokenSource {
  constructor() { const e = new EventEmitter(); this.token = { isCancellationRequested: false, onCancellationRequested: e.event }; this._e = e; }
  cancel() { this.token.isCancellationRequested = true; this._e.fire(); }
  dispose() {}
}

const recorded = { diagnostics: new Map(), messages: [], commands: new Map(), collections: [], statusItems: [] };
const diagnosticsChanged = new EventEmitter();

function makeCollection(name) {
  const map = new Map();
  const coll = {
    name,
    set(uri, diags) {
      if (Array.isArray(uri)) { for (const [u, d] of uri) coll.set(u, d); return; }
      map.set(uri.toString(), diags || []);
      recorded.diagnostics.set(uri.toString(), diags || []);
      diagnosticsChanged.fire({ uris: [uri] });
    },
    delete(uri) { map.delete(uri.toString()); recorded.diagnostics.delete(uri.toString()); },
    clear() { for (const k of map.keys()) recorded.diagnostics.delete(k); map.clear(); },
    get(uri) { return map.get(uri.toString()); },
    has(uri) { return map.has(uri.toString()); },
    forEach(cb) { for (const [k, v] of map) cb(Uri.parse(k), v, coll); },
    dispose() { coll.clear(); },
  };
  recorded.collections.push(coll);
  return coll;
}

function outputChannel(name) {
  const lines = [];
  return {
    name, lines,
    append(v) { lines.push(v); }, appendLine(v) { lines.push(v); }, replace(v) { lines.length = 0; lines.push(v); },
    clear() { lines.length = 0; }, show() {}, hide() {}, dispose() {},
    trace(v) { lines.push(v); }, debug(v) { lines.push(v); }, info(v) { lines.push(v); }, warn(v) { lines.push(v); },
    error(v) { lines.push(String(v)); }, logLevel: 2, onDidChangeLogLevel: new EventEmitter().event,
  };
}

const settings = new Map();
const docEvents = {
  open: new EventEmitter(), close: new EventEmitter(), change: new EventEmitter(), save: new EventEmitter(),
  willSave: new EventEmitter(), config: new EventEmitter(), folders: new EventEmitter(),
};
const textDocuments = [];
const contentProviders = new Map();

function textDocument(uri, text, languageId = "plaintext") {
  const lines = text.split(/\r\n|\r|\n/);
  return {
    uri, fileName: uri.fsPath, languageId, version: 1, isDirty: false, isClosed: false, isUntitled: false,
    lineCount: lines.length, getText: () => text, eol: 1,
    lineAt: (i) => ({ text: lines[typeof i === "number" ? i : i.line] ?? "" }),
    positionAt: () => new Position(0, 0), offsetAt: () => 0, save: async () => true,
  };
}

const noop = () => new Disposable(() => {});
const enumLike = (names) => Object.fromEntries(names.map((n, i) => [n, i]));

const api = {
  version: "1.90.0",
  Disposable, EventEmitter, Uri, Position, Range, Selection, Location, Diagnostic, DiagnosticRelatedInformation,
  MarkdownString, Hover, CodeLens, ThemeColor, FileDecoration, DocumentSymbol, SymbolInformation, CancellationTokenSource,
  DiagnosticSeverity: enumLike(["Error", "Warning", "Information", "Hint"]),
  DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
  SymbolKind: enumLike(["File", "Module", "Namespace", "Package", "Class", "Method", "Property", "Field",
    "Constructor", "Enum", "Interface", "Function", "Variable", "Constant", "String", "Number", "Boolean", "Array",
    "Object", "Key", "Null", "EnumMember", "Struct", "Event", "Operator", "TypeParameter"]),
  StatusBarAlignment: { Left: 1, Right: 2 },
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  ViewColumn: { Active: -1, Beside: -2, One: 1 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  UIKind: { Desktop: 1, Web: 2 },
  ExtensionMode: { Production: 1, Development: 2, Test: 3 },
  EndOfLine: { LF: 1, CRLF: 2 },
  TextEditorRevealType: { Default: 0, InCenter: 1 },
  NotebookCellKind: { Markup: 1, Code: 2 },
  env: {
    appName: "stub", appRoot: "/", language: "en", machineId: "stub", sessionId: "stub", uriScheme: "vscode",
    uiKind: 1, clipboard: { writeText: async (v) => { recorded.clipboard = v; }, readText: async () => "" },
    openExternal: async () => true,
  },
  window: {
    createOutputChannel: (name) => { const c = outputChannel(name); recorded.output = recorded.output || c; return c; },
    createStatusBarItem: () => { const i = { text: "", show() {}, hide() {}, dispose() {} }; recorded.statusItems.push(i); return i; },
    showErrorMessage: async (m) => { recorded.messages.push(["error", m]); return undefined; },
    showWarningMessage: async (m) => { recorded.messages.push(["warning", m]); return undefined; },
    showInformationMessage: async (m) => { recorded.messages.push(["info", m]); return undefined; },
    showTextDocument: async (doc) => ({ document: doc }),
    showOpenDialog: async () => undefined,
    withProgress: async (_o, task) => task({ report() {} }, new CancellationTokenSource().token),
    createWebviewPanel: () => { throw new Error("no webviews in the stub"); },
    registerCustomEditorProvider: (viewType, provider) => { (recorded.customEditors ||= []).push([viewType, provider]); return new Disposable(() => {}); },
    registerFileDecorationProvider: (provider) => { recorded.decorations = provider; return new Disposable(() => {}); },
    activeTextEditor: undefined, visibleTextEditors: [], tabGroups: { all: [], activeTabGroup: { activeTab: undefined }, onDidChangeTabs: noop },
    onDidChangeActiveTextEditor: noop, onDidChangeVisibleTextEditors: noop, onDidChangeTextEditorSelection: noop,
  },
  workspace: {
    get workspaceFolders() { return recorded.folders; },
    asRelativePath: (u) => { const p = typeof u === "string" ? u : u.path; const f = (recorded.folders || []).find((w) => p.startsWith(w.uri.path + "/")); return f ? p.slice(f.uri.path.length + 1) : p; },
    getWorkspaceFolder: (uri) => (recorded.folders || []).find((f) => uri.path.startsWith(f.uri.path)),
    getConfiguration: (section) => ({
      get: (key, fallback) => {
        const full = section ? `${section}.${key}` : key;
        if (settings.has(full)) return settings.get(full);
        // VS Code answers a section with a nested object: {severity: {warn: ...}}
        const nested = [...settings.keys()].filter((k) => k.startsWith(full + "."));
        if (!nested.length) return fallback;
        const obj = {};
        for (const k of nested) {
          const parts = k.slice(full.length + 1).split(".");
          let at = obj;
          for (const part of parts.slice(0, -1)) at = at[part] ??= {};
          at[parts[parts.length - 1]] = settings.get(k);
        }
        return obj;
      },
      has: (key) => settings.has(section ? `${section}.${key}` : key),
      // the stub's settings are the user's own (User settings)
      inspect: (key) => {
        const full = section ? `${section}.${key}` : key;
        return settings.has(full) ? { globalValue: settings.get(full) } : undefined;
      },
      update: async () => {},
    }),
    textDocuments,
    notebookDocuments: [],
    onDidOpenTextDocument: docEvents.open.event, onDidCloseTextDocument: docEvents.close.event,
    onDidChangeTextDocument: docEvents.change.event, onDidSaveTextDocument: docEvents.save.event,
    onWillSaveTextDocument: docEvents.willSave.event, onDidChangeConfiguration: docEvents.config.event,
    onDidChangeWorkspaceFolders: docEvents.folders.event,
    onDidOpenNotebookDocument: noop, onDidCloseNotebookDocument: noop, onDidChangeNotebookDocument: noop,
    onDidSaveNotebookDocument: noop, onDidCreateFiles: noop, onDidRenameFiles: noop, onDidDeleteFiles: noop,
    onWillCreateFiles: noop, onWillRenameFiles: noop, onWillDeleteFiles: noop,
    createFileSystemWatcher: () => ({ onDidCreate: noop, onDidChange: noop, onDidDelete: noop, dispose() {} }),
    registerTextDocumentContentProvider: (scheme, provider) => { contentProviders.set(scheme, provider); return new Disposable(() => contentProviders.delete(scheme)); },
    openTextDocument: async (uri) => {
      const provider = contentProviders.get(uri.scheme);
      const text = provider ? await provider.provideTextDocumentContent(uri, new CancellationTokenSource().token) : "";
      return textDocument(uri, text);
    },
    fs: { stat: async () => ({ type: 1 }) },
    isTrusted: true,
  },
  languages: {
    createDiagnosticCollection: (name) => makeCollection(name),
    getDiagnostics: (uri) => {
      if (uri) return recorded.diagnostics.get(uri.toString()) || [];
      return [...recorded.diagnostics].map(([k, v]) => [Uri.parse(k), v]);
    },
    onDidChangeDiagnostics: diagnosticsChanged.event,
    match: () => 10,
    setLanguageConfiguration: noop,
  },
  commands: {
    // As VS Code does: a second registration of one id throws (the stub once accepted it and hid a real bug).
    registerCommand: (id, fn) => {
      if (recorded.commands.has(id)) throw new Error(`command '${id}' already exists`);
      recorded.commands.set(id, fn);
      return new Disposable(() => recorded.commands.delete(id));
    },
    executeCommand: async (id, ...args) => { const fn = recorded.commands.get(id); return fn ? fn(...args) : undefined; },
    getCommands: async () => [...recorded.commands.keys()],
  },
  extensions: { getExtension: () => recorded.pythonExtension, all: [], onDidChange: noop },
  l10n: { t: (m, ...args) => (typeof m === "string" ? m.replace(/\{(\d+)\}/g, (_x, i) => String(args[i])) : m.message) },
};

// Every other provider registration (hover, code lens, symbols, …) is accepted and recorded.
api.languages = new Proxy(api.languages, {
  get(target, prop) {
    if (prop in target) return target[prop];
    if (typeof prop === "string" && prop.startsWith("register")) {
      return (...args) => { (recorded.providers ||= []).push([prop, args]); return new Disposable(() => {}); };
    }
    return undefined;
  },
});

module.exports = new Proxy(api, {
  get(target, prop) {
    if (prop in target) return target[prop];
    if (prop === "__stub") return { recorded, settings, docEvents, textDocument, Uri };
    // Unknown classes: an inert constructor, so `new vscode.X()` and `instanceof` do not throw.
    return class { constructor(...args) { this.args = args; } };
  },
});
