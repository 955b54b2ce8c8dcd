"""The language server: diagnostics on log lines, hover, code lens, symbols, watching."""
