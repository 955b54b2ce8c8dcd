"""What the editors need of the format registry: the documents a client opens with diagnostics, and the files
whose presence starts the VS Code extension. ``trainlint formats --json`` prints them; the extension's build
writes them into ``package.json`` and ``src/formats.generated.ts`` (``vscode-extension/scripts/formats.mjs``),
and ``tests/test_registries.py`` fails when those drift from the registry.
"""

from __future__ import annotations

from .readers.registry import specs

#: Activation events that are the extension's own, not a format's.
EXTENSION_ACTIVATION = ("workspaceContains:**/.trainlint.yaml", "onLanguage:jsonl", "onLanguage:csv",
                        "onFileSystem:trainlint-events", "onCustomEditor:trainlint.eventFile",
                        "onCommand:trainlint.showCurves")


#: Documents that are not logs but datasets ``preflight`` lints in the editor (speech manifests such as NeMo's
#: train_manifest.json; JSONL and CSV datasets are covered by the formats' own patterns).
DATASET_DOCUMENTS = ("**/*manifest*.json",)


def document_patterns() -> list[str]:
    out: list[str] = []
    for s in specs():
        if not s.document:
            continue
        for g in (*s.globs, *s.extras.get("documents", ())):
            if g not in out:
                out.append(g)
    return out + [g for g in DATASET_DOCUMENTS if g not in out]


def activation_events() -> list[str]:
    out: list[str] = []
    for s in specs():
        out.extend(f"workspaceContains:{g}" for g in s.activation if f"workspaceContains:{g}" not in out)
    return out + [e for e in EXTENSION_ACTIVATION if e not in out]


def editor_formats() -> dict[str, list[str]]:
    return {"documentPatterns": document_patterns(), "activationEvents": activation_events()}
