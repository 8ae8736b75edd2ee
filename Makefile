# Mirrorplane. `make demo` and `make test` are the two set-up commands; both install first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements/base.txt requirements/dev.txt | cksum | cut -d' ' -f1)
# The JavaScript lint tools (ESLint, Prettier; package.json) come from npm, pinned by package-lock.json.
NODE_STAMP := node_modules/.installed-$(shell cksum < package-lock.json | cut -d' ' -f1)
JS := frontend/static/js

# Tests run on the local Postgres and Redis (override to run elsewhere, e.g. TEST_DATABASE_URL=sqlite:///var/t.db).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
TEST_CELERY_BROKER_URL ?= redis://127.0.0.1:6379/15
PYTEST_ARGS ?=
# pytest-xdist workers for test and test-all (0: one process); a file's tests stay on one worker. The fault
# scenarios run one at a time: they freeze and kill brokers against deadlines.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile

.PHONY: bench-api install node-install demo test test-all test-unit test-faults lint format kafka-up kafka-status kafka-down clean \
	services services-stop services-check test-compat test-sqlite

install: $(STAMP)

$(STAMP):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==26.3
	$(PY) -m pip install --quiet -r requirements/dev.txt
	rm -f $(VENV)/.installed-*
	touch $@

# Dev tooling only: the browser loads frontend/static/js as plain ES modules, with no build step.
node-install: $(NODE_STAMP)

$(NODE_STAMP):
	npm ci --no-audit --no-fund
	rm -f node_modules/.installed-*
	touch $@

demo: install
	$(PY) manage.py demo

# `make test`: every test but the slow fault scenarios on Kafka 4 (KRaft), then the compatibility subset (marked
# compat: the engine with SIGKILLs, translation, the failover wizard over REST, the MM2 properties runner) on Kafka
# 2.3.0 and on a mixed set whose us-west is 2.3.0 and the others 4.x. README, "Make targets", says what each costs.
COMPAT_RUNS ?= 2.3.0 mixed
test: install services-check
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) \
		$(PY) -m pytest -m "not slow" --durations=25 $(XDIST) $(PYTEST_ARGS)
	$(MAKE) --no-print-directory test-compat
	$(MAKE) --no-print-directory test-sqlite

# The console's browser tests once more on SQLite, the demo's database (the suite above runs on Postgres): alert
# rules and targets, the audit log, records, offset resets, broker health, sign-on, MM2 export, the charts' ranges.
SQLITE_TESTS ?= tests/browser/test_alerts_manage.py tests/browser/test_audit_log.py tests/browser/test_flow_records.py \
	tests/browser/test_group_reset.py tests/browser/test_broker_health.py tests/browser/test_sso_login.py tests/browser/test_ldap_login.py \
	tests/browser/test_flow_export.py tests/browser/test_chart_range.py tests/browser/test_partitions_and_rates.py
test-sqlite: install
	@mkdir -p var && rm -f var/test-sqlite.sqlite3*
	@echo "== the console's browser tests on SQLite"
	DATABASE_URL=sqlite:///$(CURDIR)/var/test-sqlite.sqlite3 CELERY_BROKER_URL=memory:// \
		$(PY) -m pytest $(XDIST) $(SQLITE_TESTS) $(PYTEST_ARGS)

test-compat: install services-check
	@for run in $(COMPAT_RUNS); do \
		if [ $$run = mixed ]; then versions="us-west:2.3.0"; version=""; else versions=""; version=$$run; fi; \
		echo "== compatibility subset on Kafka $${version:-2.3.0 (us-west) beside the default}"; \
		MIRRORPLANE_KAFKA_VERSION=$$version MIRRORPLANE_TEST_KAFKA_VERSIONS=$$versions \
		DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) \
			$(PY) -m pytest -m "compat and not slow" $(XDIST) $(PYTEST_ARGS) || exit $$?; \
	done

test-all: install services-check
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) \
		$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

test-faults: install services-check
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) \
		$(PY) -m pytest -m slow $(PYTEST_ARGS)

# PostgreSQL and Redis for the tests, as instances of the project's own under var/services (.ci/services).
services:
	bash .ci/services start

services-stop:
	bash .ci/services stop

# Only the default addresses are checked; a run pointed elsewhere (TEST_DATABASE_URL=...) checks nothing.
services-check:
ifeq ($(TEST_DATABASE_URL)$(TEST_CELERY_BROKER_URL),postgres://postgres@127.0.0.1:5432/postgresredis://127.0.0.1:6379/15)
	@bash .ci/services check
endif

test-unit: install
	$(PY) -m pytest -m "not kafka and not slow" $(PYTEST_ARGS)

lint: install node-install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	npx --no-install eslint $(JS)
	npx --no-install prettier --check $(JS)
	npx --no-install eslint tests/js && npx --no-install prettier --check tests/js && node --test tests/js/

format: install node-install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	npx --no-install prettier --write $(JS)

kafka-up: install
	$(PY) -m localkafka up --clusters us-west,us-east,backup

kafka-status: install
	$(PY) -m localkafka status

kafka-down: install
	$(PY) -m localkafka down

clean: kafka-down
	rm -rf var .pytest_cache .mypy_cache .ruff_cache

# Benchmarks (bench/README.md): Mirrorplane beside Kafka's MirrorMaker 2 (and MirrorMaker 1 on Kafka 2.3.0) on own
# clusters (21092+; BENCH_STATE_DIR, BENCH_BROKER_PORT_BASE and BENCH_CONTROL_PORT_BASE move them), or on running
# ones given BENCH_CLUSTERS=src=host:port,dst=host:port. Figures with their min-max intervals, not pass/fail;
# `bench-quick` took 21 min on 2 cores at a load average of ~20, without the perf tools (bench/README.md).
.PHONY: bench bench-quick bench-scale
BENCH_ARGS ?=
bench: install
	BENCH_CLUSTERS=$(BENCH_CLUSTERS) $(PY) -m bench $(BENCH_ARGS)

bench-quick: install
	BENCH_CLUSTERS=$(BENCH_CLUSTERS) $(PY) -m bench --records-small 200000 --records-large 50000 \
		--replicators mm2,mp-alo,mm2-eos,mp-eos --latency-seconds 15 --latency-warmup 5 --latency-rounds 1 \
		--scaling-tasks '' --kill-replicators mm2,mp-alo,mp-eos --pickup-refresh 10 $(BENCH_ARGS)

# The analytics latency job over 10M generated facts on local[2], start-up included (target: under 30 s).
# Facts are generated once into var/bench/; BENCH_ANALYTICS_ARGS="--rounds 3 --regenerate" to change that.
.PHONY: bench-analytics
BENCH_ANALYTICS_ARGS ?=
# One flow of 1k, 3k and 10k partitions on the standalone runner: catch-up, pickup, idle CPU, memory.
bench-scale: install
	BENCH_CLUSTERS=$(BENCH_CLUSTERS) $(PY) -m bench.scale $(BENCH_SCALE_ARGS)

bench-api: install
	$(PY) -m bench.controlplane_api $(BENCH_API_ARGS)

bench-analytics: install
	$(PY) -m bench.analytics_latency $(BENCH_ANALYTICS_ARGS)

# MM2 properties import, 50 ... 2,000 clusters and flows (target: 2,000 + 2,000 under 10 s). SQLite under
# var/bench-import unless DATABASE_URL names a scratch database (it is flushed).
.PHONY: bench-import
BENCH_IMPORT_ARGS ?=
bench-import: install
	$(PY) -m bench.mm2_import $(BENCH_IMPORT_ARGS)
