"""The registries are the one source: what is derived from them stays in step (issue 23).

A format is one reader module declaring a ``FormatSpec``; a rule is one ``@check``-decorated function. The
lists that used to be written by hand in other places are derived, and where a copy must be committed (the VS
Code extension's ``package.json`` and generated TypeScript, the docs) these tests fail when it drifts.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

from conftest import ROOT
from trainlint.discovery import discover, is_candidate
from trainlint.editor_formats import activation_events, document_patterns
from trainlint.readers.registry import specs
from trainlint.rules import AFTER_CHECKS, CHECKS, RULES
from trainlint.rules.registry import Phase, check

EXT = ROOT / "vscode-extension"


def test_the_extension_activation_events_are_the_registry_s():
    pkg = json.loads((EXT / "package.json").read_text())
    assert pkg["activationEvents"] == activation_events(), "run `node vscode-extension/scripts/formats.mjs`"


def test_the_extension_document_patterns_are_the_registry_s():
    ts = (EXT / "src" / "formats.generated.ts").read_text()
    got = json.loads(re.search(r"DOCUMENT_PATTERNS: readonly string\[\] = (\[.*?\]);", ts, re.S).group(1))
    assert got == document_patterns(), "run `node vscode-extension/scripts/formats.mjs`"


def test_every_format_s_suffix_is_considered_by_discovery(tmp_path):
    """The bug the registry removes: a format discovery did not know was skipped by `check DIR`."""
    for s in specs():
        for suffix in s.suffixes:
            assert is_candidate(f"anything{suffix}"), (s.name, suffix)


def test_a_directory_check_reads_what_a_file_check_reads(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for s in specs():
        if s.fuzz_seed and not s.binary and "*" not in s.fuzz_seed and s.sniff is not None:
            src = ROOT / s.fuzz_seed
            shutil.copy(src, run / src.name)
    found = {f.format for f in discover(str(run)).found}
    wanted = {s.name for s in specs() if s.fuzz_seed and not s.binary and "*" not in s.fuzz_seed and s.sniff}
    assert wanted <= found, wanted - found


def test_every_check_is_registered_once_in_order_and_names_its_rules():
    names = [c.name for c in CHECKS + AFTER_CHECKS]
    assert len(names) == len(set(names))
    orders = [c.order for c in CHECKS]
    assert orders == sorted(orders)
    for c in CHECKS + AFTER_CHECKS:
        assert c.rules and all(r.check == c.name and r.id in RULES for r in c.rules), c.name


def test_a_check_naming_an_unknown_threshold_or_another_check_s_rule_is_refused():
    rule = next(iter(CHECKS[0].rules))
    try:
        check("made-up", rule, order=1, description="x")(lambda ctx: None)
    except ValueError as e:
        assert "names check" in str(e)
    else:
        raise AssertionError("a rule of another check was accepted")
    try:
        check(rule.check + "-x", order=1, description="x", thresholds=("no_such_threshold",), phase=Phase.LOG)(
            lambda ctx: None)
    except ValueError as e:
        assert "no_such_threshold" in str(e)
    else:
        raise AssertionError("an unknown threshold was accepted")


def test_docs_are_not_stale():
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "docs", "--check", "--dir", str(ROOT / "docs")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_docs_check_fails_when_a_page_states_an_old_threshold(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "rules" / "TP-DIVERGE.md"
    page.write_text(page.read_text().replace("`max_loss_divergence_ratio = 1.5`", "`max_loss_divergence_ratio = 2.0`"))
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "docs", "--check", "--dir", str(docs)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "TP-DIVERGE.md: stale" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "docs", "--dir", str(docs)], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "`max_loss_divergence_ratio = 1.5`" in page.read_text()


def test_docs_check_fails_while_a_new_page_is_a_skeleton(tmp_path):
    """`trainlint docs` writes a skeleton for a rule without a page; the skeleton is not a page until a person
    has written it, so `docs --check` names it (a skeleton passed every check before)."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "rules" / "TP-DIVERGE.md").unlink()
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "docs", "--dir", str(docs)], capture_output=True,
                       text=True)
    assert "TO BE WRITTEN" in (docs / "rules" / "TP-DIVERGE.md").read_text(), r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "trainlint.cli", "docs", "--check", "--dir", str(docs)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "TP-DIVERGE.md: stale: its skeleton still says 'TO BE WRITTEN'" in r.stdout, r.stdout


def test_the_extension_settings_are_the_schema_s():
    """Each setting is declared once (lsp/settings.py SCHEMA): package.json and the client's defaults follow."""
    from trainlint.lsp.settings import server_defaults, vscode_configuration

    pkg = json.loads((EXT / "package.json").read_text())
    assert pkg["contributes"]["configuration"] == vscode_configuration(), "run `node scripts/formats.mjs`"
    ts = (EXT / "src" / "settings.generated.ts").read_text()
    got = json.loads(re.search(r"SERVER_DEFAULTS: Readonly<Record<string, unknown>> = (\{.*?\});", ts, re.S).group(1))
    assert got == server_defaults(), "run `node scripts/formats.mjs`"


def test_every_server_setting_is_in_the_schema_and_parsed_with_its_default():
    from dataclasses import fields

    from trainlint.lsp.settings import SCHEMA, Settings

    declared = {s.attr for s in SCHEMA if s.attr}
    assert {f.name for f in fields(Settings)} == declared
    parsed, errors = Settings.parse({})
    assert errors == [] and parsed == Settings()
    for spec in SCHEMA:
        if spec.kind == "int":  # out of its declared range: the default, with a message naming the setting
            s, errs = Settings.parse({spec.key: spec.maximum + 1})
            assert getattr(s, spec.attr) == spec.default and errs and f"trainlint.{spec.key}" in errs[0]
