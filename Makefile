# clusterscope: `make demo` runs the main job, `make test` runs the tests.
# Both install what they need first (idempotent, non-interactive, Debian 12 as root).
# `make help` lists every target; `make test-fast` needs only Python (no root, no setup).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
CS := $(VENV)/bin/clusterscope
APT_PACKAGES := mariadb-server mariadb-client galera-4 galera-arbitrator-4 mariadb-backup \
	sysbench victoria-metrics prometheus prometheus-alertmanager prometheus-node-exporter \
	rsync chromium socat shellcheck python3-venv psmisc procps lsof ca-certificates
GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
export PATH := $(dir $(GO)):$(PATH)

.PHONY: help setup apt venv tools demo test test-fast test-tools bench lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

setup: apt venv tools ## install everything make demo and make test need

apt: ## the Debian packages (root)
	@missing=$$(for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "setup: installing Debian packages:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "setup: Debian packages present"; fi

# Three distributions: the two products and the toolkit that drives them (editable).
$(VENV)/.installed: pyproject.toml exporters/pyproject.toml loadgen/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ./exporters -e ./loadgen -e '.[dev]'
	touch $@

venv: $(VENV)/.installed ## the Python venv (.venv) with the three distributions

# VictoriaMetrics, vmagent, vmalert, Alertmanager, amtool, mysqld_exporter, VictoriaLogs, the
# OpenTelemetry Collector (compose/otelcol/) and docker compose are built from the Go module proxy at
# the versions compose pins and cached in ~/.cache/clusterscope/bin (the first build takes
# minutes; later runs reuse it).
tools: venv ## build the Go tools compose pins (first time: minutes)
	$(CS) tools build

demo: setup ## the main job: a lab, load, restarts, the report
	$(CS) demo

# Lanes (tests/lanes.py): unit (Python only), tools (promtool, MariaDB, Go-built binaries),
# lab. `make test` (what CI runs) runs all three; .ci/run sets CI=1 so a missing tool fails.
# TEST_WORKERS=2: two pytest-xdist workers, each with a lab of its own, taking whole files
# (a file's tests share its module fixtures) in conftest's order. Not the default: on two
# cores the two labs slow each other's timed tests into failures (docs/contributing.md).
TEST_WORKERS ?= 1
XDIST := $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)
test: setup ## every test, all lanes (CI runs this)
	$(PY) -m pytest -m "" $(XDIST) --durations=30

test-fast: venv ## the unit lane: Python only, under a minute
	$(PY) -m pytest -q -m unit

test-tools: setup ## the unit and tools lanes: no lab
	$(PY) -m pytest -q -m "unit or tools"

bench: setup ## the benchmarks and their measured ratios
	$(CS) bench

lint: venv ## ruff, the import layers, module and function sizes, generated files current
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m clusterscope.sizes
	$(CS) lint

clean: ## stop the lab, remove the venv and test artifacts
	-$(CS) lab down
	rm -rf $(VENV) .lab test-artifacts
