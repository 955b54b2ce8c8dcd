"""Renderings of what trainlint read and judged: text like ruff, JSON, SARIF."""
