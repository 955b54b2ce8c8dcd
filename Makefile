# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean extension gallery population calibrate

# the compiled extensions are rebuilt (pip install -e) when their C sources change: an editable install does not
$(STAMP): pyproject.toml setup.py $(wildcard server/trainlint/core/*.c server/trainlint/core/*.h)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@$(VENV)/bin/trainlint check fixtures/runs || \
	  echo "(exit code $$?: 1 means a run FAILs, as the gallery's broken runs should; 2 means nothing could be judged)"

# The callback tests run real tiny runs: torch 2.13.0 (a CPU build; a newer one downloads CUDA wheels) and the
# frameworks. Best effort: without them those tests are skipped with the reason.
FRAMEWORKS := $(VENV)/.frameworks
$(FRAMEWORKS): $(STAMP)
	$(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet transformers accelerate lightning keras \
	  || echo "torch or a framework could not be installed: the callback tests will be skipped"
	touch $(FRAMEWORKS)

# Every step runs whatever the earlier ones returned, and the summary lists each (tests/run_steps.py);
# make test still fails when any step failed.
NPM_STEP := if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory extension; \
  else echo "npm not found: the VS Code extension was not built or tested"; fi
test: $(STAMP) $(FRAMEWORKS)
	@$(PY) tests/run_steps.py \
	  "lint=$(VENV)/bin/ruff check server tests bench fixtures/live" \
	  "unit=$(PY) -m pytest -q -m 'not e2e'" \
	  'extension=$(NPM_STEP)' \
	  "editors=$(PY) -m pytest -q -m e2e -rs"

# The VS Code extension: install (from the lock file), bundle, typecheck, test, package the .vsix with the
# project's wheels inside (the extension offers to install one into a private environment). Two wheels
# (scripts/bundle_wheels.py): the pure one (TRAINLINT_PURE=1, py3-none-any), which serves every platform and reads
# every log identically, and this machine's compiled one (its Python, its platform; on Linux retagged manylinux by
# auditwheel), which pip prefers where it fits: one .vsix still serves every platform, faster where it was built.
# Then the real check: the .vsix's own bundled/ installed the extension's way into a fresh environment of this
# Python gets the compiled scanner, and pip takes the pure wheel for another Python or platform (test/bundled.test.cjs).
extension: $(STAMP)
	cd vscode-extension && npm ci --no-audit --no-fund --loglevel=error
	cd vscode-extension && TRAINLINT_PYTHON=$(abspath $(PY)) node scripts/formats.mjs
	cd vscode-extension && npm run --silent build && npm run --silent typecheck
	cd vscode-extension && TRAINLINT_PYTHON=$(abspath $(PY)) node --test test/
	$(PY) vscode-extension/scripts/bundle_wheels.py vscode-extension/bundled
	$(PY) vscode-extension/scripts/pin_requirements.py vscode-extension/bundled/trainlint-*-py3-none-any.whl > vscode-extension/bundled/requirements.txt
	cd vscode-extension && npx vsce package --no-dependencies
	cd vscode-extension && TRAINLINT_PYTHON=$(abspath $(PY)) TRAINLINT_CHECK_VSIX=1 node --test test/bundled.test.cjs

lint: $(STAMP)
	$(VENV)/bin/ruff check server tests bench

# The live-format gallery: tiny CPU runs by the real frameworks (not part of `make test`).
GALLERY_VENV ?= $(HOME)/.cache/trainlint-gallery/venv
NANOGPT_DIR ?= $(HOME)/.cache/trainlint-gallery/nanoGPT
gallery:
	test -f $(NANOGPT_DIR)/train.py || git clone --quiet --depth 1 https://github.com/karpathy/nanoGPT $(NANOGPT_DIR) \
	  || echo "nanoGPT could not be cloned: its runs are skipped"
	test -x $(GALLERY_VENV)/bin/python || $(PYTHON) -m venv $(GALLERY_VENV)
	$(GALLERY_VENV)/bin/pip install --quiet torch==2.13.0
	$(GALLERY_VENV)/bin/pip install --quiet torch==2.13.0 transformers accelerate lightning keras mlflow dvclive wandb \
	  tensorflow-cpu tensorboard trl datasets torchtune "torchao<0.14" sentencepiece \
	  fastai skorch pytorch-ignite spacy xgboost lightgbm scikit-learn stable-baselines3 gymnasium tensorboardX \
	  catboost river
	# fastai pulls torchvision, whose PyPI wheel does not load with the CPU torch ("operator torchvision::nms does not
	# exist") and transformers imports it when present: removed (no gallery run needs it)
	$(GALLERY_VENV)/bin/pip uninstall --quiet -y torchvision
	GALLERY_PYTHON=$(GALLERY_VENV)/bin/python NANOGPT_DIR=$(NANOGPT_DIR) $(PY) fixtures/live/make_gallery.py
	GALLERY_PYTHON=$(GALLERY_VENV)/bin/python $(PY) fixtures/live/make_frameworks.py

# The labelled population of real runs (issue 30; not part of `make test`): several hundred tiny CPU trainings,
# healthy or with a fault injected at a random onset. Resumable: only runs not written yet are made.
POPULATION_VENV ?= $(HOME)/.cache/trainlint-population/venv
population: $(STAMP)
	test -x $(POPULATION_VENV)/bin/python || $(PYTHON) -m venv $(POPULATION_VENV)
	$(POPULATION_VENV)/bin/pip install --quiet torch==2.13.0
	$(POPULATION_VENV)/bin/pip install --quiet transformers accelerate lightning keras scikit-learn lightgbm \
	  gymnasium tensorboard
	POPULATION_PYTHON=$(POPULATION_VENV)/bin/python $(PY) bench/population/make_population.py

# Replays every population run at growing prefixes through the judge: bench/calibration.json, docs/calibration.md.
calibrate: $(STAMP)
	$(PY) bench/calibrate.py --jobs 2

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/preflight.py
	$(PY) bench/speech.py

clean:
	rm -rf $(VENV) .pytest_cache
