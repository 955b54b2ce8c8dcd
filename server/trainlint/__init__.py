"""trainlint: a deterministic linter for ML training runs."""

__version__ = "0.1.0"
