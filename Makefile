# The two commands: `make run` and `make test`. Everything else is a step they use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: install run test lint bench migrate demo clean messages translations static

$(VENV)/.installed: pyproject.toml setup.py collectors/capture/_core.c
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

# The Chinese interface: locale/*/LC_MESSAGES/django.po compiled to the .mo beside it. The
# compiled catalogue is committed too, so a machine without gettext still runs in Chinese.
messages: install
	@if command -v msgfmt >/dev/null 2>&1; then \
		$(PY) manage.py compilemessages --ignore '.venv' --ignore 'var' -v 0; \
	else \
		echo "msgfmt is missing (apt-get install gettext): using the committed compiled catalogue"; \
	fi

# After marking new strings: extract them into the catalogue, translate them, then `make messages`.
translations: install
	$(PY) manage.py makemessages -l zh_Hans --no-location --no-obsolete --ignore '.venv' --ignore 'var' --ignore 'tests'

# The big vendored scripts (plotly.js is 4.6 MB) compressed beside themselves; WhiteNoise
# sends the .gz to browsers that take it.
static: install
	$(PY) -m whitenoise.compress -q --no-brotli static/vendor

run: demo messages static
	$(PY) manage.py runstack --port $(PORT)

# The suite on TEST_WORKERS processes (pytest-xdist; each its own test database, Celery
# worker, queue, sshd hosts on its own loopback /24 and cache keys) and, beside it, the
# tests marked `serial` (they measure time on this machine) in one process whose CPU comes
# first: the parallel lane runs in a cgroup of low CPU weight (tests/lanes.py). Where no
# such cgroup can be made, and with TEST_LANES=in-turn, the serial lane runs after it.
# A machine may set PYTHONDONTWRITEBYTECODE (containers often do): then every test process,
# and every worker or command a test starts, would compile the project afresh. The suite
# writes bytecode (compiled once, up front, on every core).
TEST_WORKERS ?= 4
TEST_LANES ?= together
TEST_PY := env -u PYTHONDONTWRITEBYTECODE $(PY)
test: install var messages static
	$(VENV)/bin/ruff check .
	$(TEST_PY) -m compileall -q -j 0 app investigations collectors tests manage.py
	$(TEST_PY) -m tests.lanes $(TEST_WORKERS) $(TEST_LANES)

# Speed targets, measured on real sshd test hosts (needs root for their mount namespaces):
# host facts end to end through the API of a default stack of the bench's own (a temporary
# var dir and port; `make run`'s var/ is never touched) against ansible, then the ladder,
# then folding a large perf script against FlameGraph's stackcollapse-perf.pl, then
# analysing a capture of 1.2 million packets against tshark (engine, and through a stack),
# then the case page of 10,000 timeline events under gunicorn against a bare view.
bench: install var
	status=0; \
	$(PY) -m tests.bench.bench_facts || status=$$?; \
	$(PY) -m tests.bench.bench_ladder || status=$$?; \
	$(PY) -m tests.bench.bench_fold || status=$$?; \
	$(PY) -m tests.bench.bench_capture || status=$$?; \
	$(PY) -m tests.bench.bench_case_page || status=$$?; \
	$(PY) -m tests.bench.bench_scenarios || status=$$?; \
	exit $$status

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf var/broker var/test.sqlite3*
