"""The bottom layer: the data model, findings and reports, value formatting, and file I/O.

Nothing here imports anything above it (tests/test_layers.py): readers build ``core.model`` objects, rules
return ``core.findings`` objects, the judge assembles a ``core.report.Report``, and the CLI, outputs and the
language server only read them.
"""
