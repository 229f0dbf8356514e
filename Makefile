# The only entry points a person needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
FLASK := $(BIN)/flask --app wsgi

.PHONY: run reload install instructor instructor-name password backup restore test lint bench profile evidence screenshots clean

# On a laptop the secret key lives in instance/secret_key, made on first use; a server sets it.
run reload instructor password backup restore evidence: export SECRET_KEY ?= $(shell $(PYTHON) app/config.py)

# A restart serves what was published last; only the first start publishes questions.json.
# -OO leaves the code's docstrings on disk: 5 MB less in each worker (bench/analysis.md).
run: $(VENV)/.installed-run
	$(FLASK) db upgrade
	$(FLASK) quiz reload --if-unpublished
	$(BIN)/python -OO -m gunicorn -c gunicorn.conf.py

# After editing the bank, while serving or not: a bad file is refused and nothing changes.
reload: $(VENV)/.installed-run
	$(FLASK) quiz reload

# Always reinstall, so that an upgrade picks up new releases of the dependencies.
install: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --upgrade -e .
	touch $(VENV)/.installed-run

backup: $(VENV)/.installed-run
	$(FLASK) backup $(FILE)

# Only with the server stopped: the command refuses while anything has the database open.
restore: $(VENV)/.installed-run
	$(FLASK) restore $(FILE)

# Checked first, so that a forgotten NAME= says how to call it instead of Flask's usage error.
instructor: instructor-name $(VENV)/.installed-run
	$(FLASK) create-instructor $(NAME) $(if $(ADMIN),--admin)

instructor-name:
	@test -n "$(NAME)" || { echo "Say who: make $(MAKECMDGOALS) NAME=ada"; exit 2; }

password: instructor-name $(VENV)/.installed-run
	$(FLASK) set-password $(NAME)

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/pytest

bench: $(VENV)/.installed-test
	$(BIN)/python bench/importers.py
	@command -v wrk >/dev/null || { echo "make bench needs wrk: sudo apt-get install wrk"; exit 1; }
	$(BIN)/python bench/run.py

# Where one page's time goes, in process: make profile PAGE=question (answer, results, class).
profile: $(VENV)/.installed-profile
	$(BIN)/python bench/profile.py $(or $(PAGE),question)

# Measures gradient checkpointing with PyTorch (a few minutes) and rewrites evidence/*.json,
# then checks them against their schema, which app servers leave to the command line.
evidence: $(VENV)/.installed-evidence
	$(BIN)/python evidence/checkpointing.py
	$(FLASK) quiz check

screenshots: $(VENV)/.installed-test
	$(BIN)/python tests/e2e/screenshots.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Quizwright needs Python 3.11 or newer")'
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "Could not create $(VENV). On Debian or Ubuntu, install python3-venv first."; exit 1; }

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-profile: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,profile]'
	touch $@

$(VENV)/.installed-evidence: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[evidence]'
	touch $@

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
