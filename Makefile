# clusterscope: `make demo` runs the main job, `make test` runs the tests.
# Both install what they need first (idempotent, non-interactive, Debian 12 as root).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
CS := $(VENV)/bin/clusterscope
APT_PACKAGES := mariadb-server mariadb-client galera-4 galera-arbitrator-4 mariadb-backup \
	sysbench victoria-metrics prometheus prometheus-alertmanager prometheus-node-exporter \
	rsync chromium socat shellcheck python3-venv psmisc procps lsof ca-certificates
GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
export PATH := $(dir $(GO)):$(PATH)

.PHONY: setup apt venv tools demo test bench lint clean

setup: apt venv tools

apt:
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

venv: $(VENV)/.installed

# VictoriaMetrics, vmagent, vmalert, Alertmanager, amtool, mysqld_exporter, VictoriaLogs, the
# OpenTelemetry Collector (compose/otelcol/) and docker compose are built from the Go module proxy at
# the versions compose pins and cached in ~/.cache/clusterscope/bin (the first build takes
# minutes; later runs reuse it).
tools: venv
	$(CS) tools build

demo: setup
	$(CS) demo

test: setup
	$(PY) -m pytest

bench: setup
	$(CS) bench

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(CS) lint

clean:
	-$(CS) lab down
	rm -rf $(VENV) .lab test-artifacts
