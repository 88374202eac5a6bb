# The two commands: `make run` and `make test`. Everything else is a step they use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: install run test lint bench migrate demo clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

var:
	mkdir -p var

migrate: install var
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

run: demo
	$(PY) manage.py runstack --port $(PORT)

test: install var
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

# Speed targets, measured on real sshd test hosts (needs root for their mount namespaces):
# host facts end to end through the API of a default stack of the bench's own (a temporary
# var dir and port; `make run`'s var/ is never touched) against ansible, then the ladder.
bench: install var
	status=0; \
	$(PY) -m tests.bench.bench_facts || status=$$?; \
	$(PY) -m tests.bench.bench_ladder || status=$$?; \
	exit $$status

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf var/broker var/test.sqlite3*
