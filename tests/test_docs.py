"""Rules and their pages stay in step both ways; every page has the same sections."""

from __future__ import annotations

from conftest import ROOT
from trainlint.core.docs_links import rule_url
from trainlint.rules import RULES

DOCS = ROOT / "docs" / "rules"
DATASET_CHECKS = {"dataset-lines", "dataset-text", "dataset-chat", "dataset-duplicates", "dataset-leakage",
                  "tokenizer", "speech-manifest", "speech-audio", "speech-text", "speech-corpus"}
ENV_CHECKS = {"env-import", "env-memory", "env-disk", "env-checkpoint"}
SECTIONS = ("## What it measures", "## When it fires", "## What it does not mean", "## Example from a real log")


def test_every_rule_has_a_page_and_every_page_a_rule():
    pages = {p.stem for p in DOCS.glob("*.md")}
    assert pages == set(RULES), (set(RULES) - pages, pages - set(RULES))


def test_pages_have_the_sections_and_the_rule_level():
    for rid, rule in RULES.items():
        text = (DOCS / f"{rid}.md").read_text()
        assert text.startswith(f"# {rid} — ")
        assert f"**Level:** {rule.level.value}" in text
        sections = SECTIONS if rule.check not in DATASET_CHECKS else (*SECTIONS[:3], "## Example from a real dataset")
        if rule.check in ENV_CHECKS:
            sections = (*SECTIONS[:3], "## Example from a real machine")
        for s in sections:
            assert s in text, (rid, s)


def test_doc_links_point_at_the_pages():
    assert rule_url("TP-DIVERGE") == (DOCS / "TP-DIVERGE.md").as_uri()
