"""Imports point one way — front (cli, lsp, watch, callbacks) → judge → rules → readers → core — and no module
imports itself back through another (issue 23).

Every import is read from the source, at module level and inside functions alike: an import hidden in a
function is still a dependency. Imports inside functions are allowed only for start-up cost, marked so.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "server" / "trainlint"

# Lowest first. A module may import modules of its own layer or of a lower one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("trainlint", "trainlint.core")),
    ("readers", ("trainlint.readers", "trainlint.discovery", "trainlint.runs")),
    ("rules", ("trainlint.rules",)),
    ("judge", ("trainlint.judge", "trainlint.config", "trainlint.preflight", "trainlint.speech_preflight",
               "trainlint.dataset_report", "trainlint.events_view", "trainlint.curves",
               "trainlint.output")),
    ("front", ("trainlint.cli", "trainlint.__main__", "trainlint.lsp", "trainlint.watch", "trainlint.integrations",
               "trainlint.docgen", "trainlint.editor_formats", "trainlint.envcheck", "trainlint.parallel",
               "trainlint.notify")),
)


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank >= 0, f"{module} belongs to no layer: add it to LAYERS in tests/test_layers.py"
    return rank


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, source: str | None = None, typing_only: bool = True) -> list[tuple[str, int]]:
    """(imported trainlint module, line) for every import in ``path``, resolved to the deepest module; without
    ``typing_only``, the imports under ``if TYPE_CHECKING:`` are left out (they run only in a type checker: a
    feature module naming the server class in its annotations is not a cycle at run time)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(source if source is not None else path.read_text(), str(path))
    skip: set[int] = set()
    if not typing_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "trainlint")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "trainlint":
                continue
            for a in node.names:  # `from . import compare` imports the module trainlint.rules.compare
                sub = f"{target}.{a.name}"
                out.append((sub if _is_module(sub) else target, node.lineno))
    return out


def _is_module(name: str) -> bool:
    p = PACKAGE.parent.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def graph(typing_only: bool = True) -> dict[str, list[tuple[str, int]]]:
    return {module_name(p): imports(p, typing_only=typing_only) for p in sorted(PACKAGE.rglob("*.py"))}


def upward(g: dict[str, list[tuple[str, int]]]) -> list[str]:
    return [f"{m} (layer {LAYERS[layer_of(m)][0]}) imports {t} (layer {LAYERS[layer_of(t)][0]}) at line {line}"
            for m, edges in g.items() for t, line in edges if layer_of(t) > layer_of(m)]


def cycles(g: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan). A package's ``__init__`` importing its
    own submodules is an edge like any other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _ in g.get(v, ()):
            if w == v or w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    return out


def test_no_import_points_up():
    assert upward(graph()) == []


def test_no_import_cycle():
    assert cycles(graph(typing_only=False)) == []


@pytest.mark.parametrize("inject", [
    ("core/model.py", "from ..judge import judge_log\n", "upward"),
    ("rules/stats.py", "from .nan import check_nan\n", "cycle"),
])
def test_the_layer_test_fails_when_an_arrow_is_injected(inject):
    """The test is not vacuous: an injected upward import, and an injected cycle, are both caught."""
    rel, line, kind = inject
    g = graph(typing_only=False)
    path = PACKAGE / rel
    g[module_name(path)] = imports(path, path.read_text() + "\n" + line, typing_only=False)
    if kind == "upward":
        assert any("imports trainlint.judge" in u for u in upward(g))
    else:
        assert any("trainlint.rules.stats" in c and "trainlint.rules.nan" in c for c in cycles(g))


def test_function_level_imports_say_why():
    """An import of trainlint's own modules inside a function is there for start-up cost only, and says so: a
    comment on its line or the line above, the function's docstring, or the module's docstring (a module whose
    every command imports what it needs when it runs). Third-party imports inside functions are always lazy
    loading of a dependency. Listed, not counted: each entry is a module, its line and the import."""
    unmarked = []
    for p in sorted(PACKAGE.rglob("*.py")):
        lines = p.read_text().split("\n")
        tree = ast.parse("\n".join(lines))
        if "start-up" in (ast.get_docstring(tree) or ""):
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom) and node.col_offset > 0 and _own(node):
                    here = lines[node.lineno - 1]
                    above = lines[node.lineno - 2] if node.lineno >= 2 else ""
                    if "#" not in here and not above.strip().startswith("#") and not _lazy_documented(fn):
                        unmarked.append(f"{module_name(p)}:{node.lineno}: {here.strip()}")
    assert unmarked == [], "\n".join(unmarked)


def _own(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "trainlint"
    return any(a.name.split(".")[0] == "trainlint" for a in node.names)


def _lazy_documented(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    doc = ast.get_docstring(fn) or ""
    return "lazily" in doc or "start-up" in doc


def test_servers_are_made_by_a_factory_with_every_feature_registered_in_process():
    """No module-level server: two servers in one process each have their own state and every feature."""
    from trainlint.lsp.features import features
    from trainlint.lsp.server import create_server

    a, b = create_server(), create_server()
    assert a.ws is not b.ws and a.settings is not b.settings
    for server in (a, b):
        registered = set(server.protocol.fm.features)
        assert {"textDocument/hover", "textDocument/codeLens", "textDocument/documentSymbol", "initialize",
                "trainlint/renderEvents", "trainlint/isLog", "textDocument/didOpen"} <= registered, registered
        assert "trainlint.rescan" in server.protocol.fm.commands
    assert {m.__name__.rsplit(".", 1)[1] for m in features()} >= {"hover", "outline", "documents", "lifecycle"}


def test_no_function_is_over_80_lines():
    """A function a reader cannot hold in view hides its steps: split it (issue 23)."""
    long = []
    for p in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{module_name(p)}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []


def test_the_server_module_holds_only_its_plumbing():
    """`lsp/server.py` was 704 lines with nine sections, each a feature: features live in `lsp/features/`, one
    module each, and the server module keeps the state and the plumbing (issue 23: under 300 lines)."""
    lines = len((PACKAGE / "lsp" / "server.py").read_text().splitlines())
    assert lines < 300, f"lsp/server.py has {lines} lines: move a feature to lsp/features/"
