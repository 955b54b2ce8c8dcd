# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean extension

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@$(VENV)/bin/trainlint check fixtures/runs || \
	  echo "(exit code $$?: 1 means a run FAILs, as the gallery's broken runs should; 2 means nothing could be judged)"

test: $(STAMP)
	$(VENV)/bin/ruff check server tests bench
	$(PY) -m pytest -q
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory extension; \
	else echo "npm not found: the VS Code extension was not built or tested"; fi

# The VS Code extension: install (from the lock file), bundle, typecheck, test, package the .vsix.
extension: $(STAMP)
	cd vscode-extension && npm ci --no-audit --no-fund --loglevel=error
	cd vscode-extension && npm run --silent build && npm run --silent typecheck
	cd vscode-extension && TRAINLINT_PYTHON=$(abspath $(PY)) node --test test/
	cd vscode-extension && npx vsce package --no-dependencies

lint: $(STAMP)
	$(VENV)/bin/ruff check server tests bench

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache
