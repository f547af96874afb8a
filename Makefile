# The README's two commands: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS ?= dev,viz,notebooks,docs,compare,onnx,fuse
# one stamp per pyproject.toml and set of extras: `make lessons` (the lessons extra alone)
# after `make test` (every extra) installs nothing new, and `make test` after it does
comma  := ,
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)-$(subst $(comma),+,$(EXTRAS))
PYTEST_ARGS ?= -n 2

.PHONY: venv graphviz chromium test demo lint format bench gpu-check docs lessons-html lessons \
  pytorch clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	@rm -f $(VENV)/.installed-*-$(subst $(comma),+,$(EXTRAS)) && touch $@

# $(call apt_install,COMMAND,PACKAGE,OTHERWISE,IF_APT_FAILS): when COMMAND is missing, install
# Debian's PACKAGE if we are root with apt-get (IF_APT_FAILS when that fails, e.g. a held dpkg
# lock), else run OTHERWISE (a message, and maybe a failure).
define apt_install
@command -v $(1) >/dev/null 2>&1 || { \
  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
    echo "installing Debian's $(2) package"; \
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) \
      >/dev/null; } || { $(4); }; \
  else \
    $(3); \
  fi; }
endef

# Graphviz's `dot` draws the graphs: without it, stop and say how to install it.
DOT ?= dot
NO_DOT := echo "Graphviz's 'dot' program is missing. Install it: 'sudo apt-get install graphviz'" \
  "(Debian/Ubuntu), 'brew install graphviz' (macOS) or 'conda install graphviz'."; exit 1
DOT_FAILED := echo "could not install graphviz with apt-get (see above); install it and rerun"; \
  exit 1
graphviz:
	$(call apt_install,$(DOT),graphviz,$(NO_DOT),$(DOT_FAILED))

# Headless Chromium lets the docs test look at a built lesson page. It is optional: without
# it (no root, or apt-get failing) that one test is skipped with its reason.
CHROMIUM ?= chromium
NO_CHROMIUM := echo "note: 'chromium' is missing, so the docs page check will be skipped" \
  "(install it with 'sudo apt-get install chromium')"
CHROMIUM_FAILED := echo "note: installing chromium failed (see above), so the docs page check" \
  "will be skipped; make test goes on"
chromium:
	$(call apt_install,$(CHROMIUM),chromium,$(NO_CHROMIUM),$(CHROMIUM_FAILED))

# The whole suite: lint, the tests, and every lesson notebook run top to bottom.
test: venv graphviz chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS) tests notebooks --nbmake

docs: venv
	$(BIN)/python -m mkdocs build --strict

# Every lesson as one standalone HTML file (build/lessons-html/), the student edition as the
# site publishes it, with KaTeX inlined: the maths renders offline, nothing loads from a CDN.
lessons-html: venv
	$(BIN)/python docs/lesson_html.py

# A student's one command (in the student edition): a venv with the lessons extra alone (no
# test tools, no PyTorch: `make pytorch` adds it for lessons 12-14), Graphviz, then JupyterLab.
# The address it prints opens lesson 0, and its file browser lists each lesson once: the
# jupytext twin NN_name.py of each notebook (NNa_name.py for a part of a lesson in parts) stays
# on disk (kept in step), out of the listing.
# Jupyter refuses to run as root without --allow-root (a container, a VM).
LESSON_EXTRAS ?= lessons
LESSON_0 := notebooks/00_setup.ipynb
HIDE_GLOBS := ["__pycache__","*.pyc","*.pyo",".DS_Store","*~","[0-9][0-9]*_*.py"]
JUPYTER_ARGS ?= $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
lessons: graphviz
	@$(MAKE) --no-print-directory venv EXTRAS=$(LESSON_EXTRAS)
	$(BIN)/jupyter lab --LabApp.default_url=/lab/tree/$(LESSON_0) \
	  '--ContentsManager.hide_globs=$(HIDE_GLOBS)' $(JUPYTER_ARGS)

# PyTorch's CPU build for lessons 12-14 (plain `pip install torch` fetches the CUDA build, some
# GBs); on an NVIDIA GPU machine, TORCH_INDEX= takes PyPI's.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
pytorch:
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q torch $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))

demo: venv graphviz
	$(BIN)/tinygrad-edu demo

lint: venv
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: venv
	$(BIN)/python -m benchmarks.run

# The CuPy backend on a GPU in one run (docs/gpu.md): installs nothing and uses the Python on
# PATH, as a GPU machine's image provides it (packages carried as wheels come in through a
# PYTHONPATH set before). Results under $(OUT) (build/gpu-check unless OUT is set);
# GPU_CHECK_ARGS=--dry-run is the quick CPU run that CI does.
OUT ?= build/gpu-check
GPU_CHECK_ARGS ?=
gpu-check:
	PYTHONPATH=.$${PYTHONPATH:+:$$PYTHONPATH} $(PYTHON) -m benchmarks.gpu_check --out "$(OUT)" \
	  $(GPU_CHECK_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
