# Settee: `make run` starts the whole platform on this machine; `make test` runs every test.
# Both install what is missing first (npm packages; Debian's redis-server, etcd-server and chromium,
# the last for the Fauxton browser test; QStash's Python SDK from PyPI in a virtual environment; the
# Kubernetes binaries and versitygw (the S3-compatible server backups go to) built once from the Go
# module proxy, and the Fauxton release from the npm registry, all cached in ~/.cache/settee).

SHELL := /bin/bash
.DEFAULT_GOAL := help
NPM_STAMP := node_modules/.settee-installed
JEST := node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js

# `make chaos`: CHAOS_MINUTES, CHAOS_FAULTS_PER_MINUTE and CHAOS_SEED (bench/chaos.ts).
.PHONY: help deps system-deps python-sdk bench-deps kube-tools s3-server fauxton couchdb-release web run test lint build unit bench chaos format clean crds images

help:
	@echo "make run    start the platform locally (control plane, Redis, operator, gateway)"
	@echo "make test   lint, type-check and run every test suite"
	@echo "make unit   run the unit tests alone (no server started)"
	@echo "make bench  run the benchmarks under bench/"
	@echo "make chaos  the chaos soak: faults injected under load, every acknowledged write checked (CHAOS_MINUTES, CHAOS_FAULTS_PER_MINUTE, CHAOS_SEED)"
	@echo "make images build the operator, gateway and console images (needs a Docker engine)"

$(NPM_STAMP): package.json package-lock.json
	@echo "==> installing npm packages (npm ci)"
	npm ci --no-audit --no-fund
	@touch $@

# $(call apt_install_missing,command:package ...): apt-get installs each package whose command is missing.
define apt_install_missing
	@missing=""; \
	for pair in $(1); do command -v "$${pair%%:*}" >/dev/null || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "==> installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get install -y -q $$missing || { $$SUDO apt-get update -q && $$SUDO apt-get install -y -q $$missing; } || \
	    { echo "error: could not install$$missing; install them with apt-get" >&2; exit 1; }; \
	fi
endef

# etcd is not needed when KUBEBUILDER_ASSETS provides one; chromium runs the Fauxton browser test;
# valkey-server (the valkey jest project's engine) comes from bookworm-backports, whose source is
# added first (bookworm itself has no valkey-server; the apt macro updates the lists when an
# install fails).
system-deps:
	@command -v valkey-server >/dev/null || bash local/tools/add-debian-backports.sh
	$(call apt_install_missing,redis-server:redis-server valkey-server:valkey-server chromium:chromium $(if $(KUBEBUILDER_ASSETS),,etcd:etcd-server))

# QStash's Python SDK for test/e2e/queue/python-sdk.test.ts: a virtual environment in
# ~/.cache/settee/python-sdk, installed once per test/python/requirements.txt.
python-sdk: system-deps
	@echo "==> QStash's Python SDK (qstash from PyPI, in a virtual environment)"
	@bash local/tools/install-python-sdk.sh >/dev/null

# The anchor proxy of bench/gateway-proxy.ts.
bench-deps:
	$(call apt_install_missing,/usr/sbin/nginx:nginx-light)

kube-tools: system-deps
	@echo "==> Kubernetes binaries (kube-apiserver, kubectl, helm)"
	@bash local/tools/build-kube-tools.sh >/dev/null

# The S3-compatible server backups are stored in by the tests and `make run` (about a minute to build).
s3-server:
	@echo "==> versitygw (S3-compatible object storage for backups)"
	@bash local/tools/build-s3-server.sh >/dev/null

# The Fauxton release the pouchdb stand-in serves at /_utils, fetched once into ~/.cache/settee.
fauxton: $(NPM_STAMP)
	@echo "==> Fauxton (the web UI CouchDB 3.x ships at /_utils)"
	@npx tsx local/tools/fetch-fauxton.ts >/dev/null

# The Apache CouchDB release the kubelet stand-in runs for couchdb:3.* pods: ../shared/engines/'s
# tarball (or SETTEE_COUCHDB_RELEASE's), sha256-checked and unpacked once into ~/.cache/settee.
# Without one, the pouchdb-server stand-in serves instead, and make run and the tests say so.
couchdb-release:
	@echo "==> Apache CouchDB release (the engine of couchdb:3.* pods)"
	@bash local/tools/unpack-couchdb-release.sh >/dev/null

deps: $(NPM_STAMP) system-deps python-sdk kube-tools s3-server fauxton couchdb-release

lint: $(NPM_STAMP) kube-tools
	@echo "==> lint (eslint, import rules, prettier, CRDs from their TypeScript, chart)"
	npx eslint .
	npx depcruise --config .dependency-cruiser.cjs .
	npx prettier --check . --log-level warn
	npx tsx local/tools/render-crds.ts --check
	"$$(bash local/tools/build-kube-tools.sh)/helm" lint --strict charts/settee

# The CRDs, rendered from TypeScript into crds/, the chart's copy and docs/crds.md (docs/helm.md).
crds: $(NPM_STAMP)
	npx tsx local/tools/render-crds.ts

# Needs a Docker engine (none runs on the development machines here).
IMAGE_REGISTRY ?= ghcr.io/settee-dev
IMAGE_TAG ?= $(shell node -p "require('./package.json').version")
images:
	docker build -f docker/Dockerfile --target operator -t $(IMAGE_REGISTRY)/settee-operator:$(IMAGE_TAG) .
	docker build -f docker/Dockerfile --target gateway -t $(IMAGE_REGISTRY)/settee-gateway:$(IMAGE_TAG) .
	docker build -f docker/Dockerfile --target console -t $(IMAGE_REGISTRY)/settee-console:$(IMAGE_TAG) .

# The console's page (React, built by Vite into console/web/dist), which the console server serves.
web: $(NPM_STAMP)
	@echo "==> console page (vite build)"
	@npm run --silent build:web

build: $(NPM_STAMP)
	@echo "==> type-check (tsc) and the console page (vite build)"
	npm run --silent build

# Two jest runs: the unit project first (no server, seconds), so a broken unit test fails before the
# control planes start; then integration and e2e, which share one control plane per worker, with the
# valkey project (the queue suites jest.config.js lists, again on valkey-server) in the same run.
test: deps lint build
	@echo "==> jest: unit project (no server)"
	$(JEST) --selectProjects unit
	@echo "==> jest: integration, e2e and valkey projects (one embedded control plane per worker)"
	SETTEE_TEST_VALKEY=1 $(JEST) --selectProjects integration e2e valkey

unit: $(NPM_STAMP)
	$(JEST) --selectProjects unit

run: deps web
	npx tsx local/main.ts

# The chaos soak runs on its own (make chaos): minutes long, it is no benchmark.
bench: deps bench-deps
	@for b in $(filter-out bench/chaos.ts bench/chaos-recovery.ts,$(wildcard bench/*.ts)); do echo "==> $$b"; npx tsx $$b || exit 1; done

chaos: deps
	npx tsx bench/chaos.ts

format: $(NPM_STAMP)
	npx prettier --write . --log-level warn
	npx eslint --fix .

clean:
	rm -rf dist .settee coverage
