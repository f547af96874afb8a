# The README's two commands: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
EXTRAS ?= dev,viz,notebooks,docs
PYTEST_ARGS ?= -n 2

.PHONY: venv graphviz chromium test demo lint format bench docs clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	@rm -f $(VENV)/.installed-* && touch $@

# Graphviz's `dot` draws the graphs. Install Debian's package when we can, else say how.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Graphviz (Debian package graphviz)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "Graphviz's 'dot' program is missing. Install it: 'sudo apt-get install graphviz'" \
	         "(Debian/Ubuntu), 'brew install graphviz' (macOS) or 'conda install graphviz'."; \
	    exit 1; \
	  fi; }

# Headless Chromium lets the docs test look at a built lesson page. Without it (and without
# root to install it) that one test is skipped with its reason.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Chromium (Debian package chromium) for the docs page check"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "note: 'chromium' is missing, so the docs page check will be skipped" \
	         "(install it with 'sudo apt-get install chromium')"; \
	  fi; }

# The whole suite: lint, the tests, and every lesson notebook run top to bottom.
test: venv graphviz chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS) tests notebooks --nbmake

docs: venv
	$(BIN)/python -m mkdocs build --strict

demo: venv graphviz
	$(BIN)/tinygrad-edu demo

lint: venv
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: venv
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
