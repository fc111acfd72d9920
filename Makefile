# Geneva's tasks. `make help` lists them.
#
# Without DATABASE_URL (or TEST_DATABASE_URL for the tests), the tasks that
# need a database start a throwaway PostgreSQL server and remove it afterwards.

GO ?= go
WITHPG := $(GO) run ./internal/cmd/withpg --
# the sizes of make bench-growth (finished workflows in history)
GROWTH ?= 0,1000000,10000000

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the tasks
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_\/-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The demo is built, then run (./demo, ignored by git), not `go run`: Ctrl-C
# stops the demo cleanly (it says "Stopped." and exits 0), where `go run`
# exits 1 whenever it is interrupted and make then reports "Error 1". (make
# itself, interrupted, still ends by the signal, silently.)
DEMO := ./demo

.PHONY: demo
demo: ## Run the manual's example workflows with a worker, printing each step's outcome, then what `geneva ls`, `stats` and `show` say (a throwaway PostgreSQL unless DATABASE_URL is set; no web dashboard: see demo/dashboard)
	@echo "Building the demo (the first time takes about a minute)..."
	@$(GO) build -o $(DEMO) ./examples/demo
	$(DEMO)

.PHONY: demo/dashboard
demo/dashboard: ## The demo, then its database, worker and web dashboard stay up at http://127.0.0.1:8080/ until interrupted (Ctrl-C)
	@echo "Building the demo (the first time takes about a minute)..."
	@$(GO) build -o $(DEMO) ./examples/demo
	$(DEMO) --dashboard 127.0.0.1:8080

.PHONY: test
test: ## Run every test (starts a throwaway PostgreSQL unless TEST_DATABASE_URL is set)
	@echo "Building the tests (the first time takes a few minutes), then running them (about four minutes on 2 cores)..."
ifdef TEST_DATABASE_URL
	$(GO) test -timeout 20m ./...
else
	$(WITHPG) $(GO) test -timeout 20m ./...
endif

# The packages that run workers, whose steps' ends a worker records in
# batches by default (worker.Config.CompleteBatchSize).
WORKER_PKGS := ./worker/... ./examples/... ./otelgeneva/ ./promgeneva/

.PHONY: test/unbatched
test/unbatched: ## Run the packages that run workers again with every step's end recorded alone (GENEVA_COMPLETE_BATCH_SIZE=1); `test` runs them batched
ifdef TEST_DATABASE_URL
	GENEVA_COMPLETE_BATCH_SIZE=1 $(GO) test $(WORKER_PKGS)
else
	GENEVA_COMPLETE_BATCH_SIZE=1 $(WITHPG) $(GO) test $(WORKER_PKGS)
endif

.PHONY: test/failover
test/failover: ## Fail over under load: a primary killed and its standby promoted, synchronous and asynchronous, and docs/high-availability.md's walk-through (internal/failover; starts its own servers; 1-2 minutes)
	GENEVA_FAILOVER_TEST=1 $(GO) test -count=1 -v -timeout 10m ./internal/failover

.PHONY: test/race
test/race: ## Run every test with the race detector
ifdef TEST_DATABASE_URL
	$(GO) test -race ./...
else
	$(WITHPG) $(GO) test -race ./...
endif

.PHONY: bench
bench: ## Measure Geneva beside raw River on a durable and a non-durable server, the headline runs, and where PL/Proxy is installed the cells row (bench/cells/run.sh, shorter) (8 minutes on a busy 2-core machine; a throwaway PostgreSQL unless DATABASE_URL is set); writes bench/RESULTS.md. BENCHFLAGS passes flags, e.g. BENCHFLAGS='-runs headline,limits' (go run ./cmd/geneva-bench -h lists the runs)
	$(GO) run ./cmd/geneva-bench $(BENCHFLAGS)

.PHONY: bench/full
bench/full: ## The same with every run: also awaits, limits, fairness, fan-out, growth to 1M finished workflows (make bench-growth: to 10M), schedules, resumable steps (13-23 minutes on 2 cores)
	$(GO) run ./cmd/geneva-bench -runs full $(BENCHFLAGS)

.PHONY: bench-growth
bench-growth: ## Measure the claims and ends, create_workflow, every view, read, metrics query and dashboard page as history grows to 10,000,000 finished workflows (issue 50's growth rows; the history written straight into its partitions, a slice moved by housekeeping and timed; some 30 minutes and 15 GB of disk on a busy 2-core machine; a throwaway PostgreSQL unless DATABASE_URL is set); prints how long each part took; writes bench/RESULTS-growth.md. GROWTH sets the sizes (default 0,1000000,10000000); BENCHFLAGS passes flags, e.g. BENCHFLAGS='-growth-runs 5'
	$(GO) run ./cmd/geneva-bench -runs growth -growth $(GROWTH) -results bench/RESULTS-growth.md $(BENCHFLAGS)

.PHONY: bench-sql
bench-sql: sql ## Measure the claim and end path's cost to PostgreSQL on one connection, alone (bench/micro/run.sh; writes dist/geneva.sql first; a throwaway PostgreSQL unless DATABASE_URL is set). MICROFLAGS passes flags and what to compare, e.g. MICROFLAGS='-b 32 HEAD~1 tree'
ifdef DATABASE_URL
	bash bench/micro/run.sh $(MICROFLAGS)
else
	$(WITHPG) bash bench/micro/run.sh $(MICROFLAGS)
endif

.PHONY: bench-cells
bench-cells: ## Measure what the cells' PL/Proxy router adds to a call: create_workflow and get_workflow through a router onto 2 cells, on a cell, on one database, p50 and p99; and steps a second through 2 cells (a worker each) ÷ one database (bench/cells/run.sh; needs pgbench and PL/Proxy; a throwaway PostgreSQL unless DATABASE_URL is set). CELLSFLAGS passes flags, e.g. CELLSFLAGS='-T 30 -W 5000'
ifdef DATABASE_URL
	bash bench/cells/run.sh $(CELLSFLAGS)
else
	$(WITHPG) bash bench/cells/run.sh $(CELLSFLAGS)
endif

.PHONY: bench-sql-instructions
bench-sql-instructions: sql ## Count the instructions PostgreSQL spends on the claim and end path, under valgrind: what bench-sql measures, without the noise (bench/micro/instructions.sh, which starts its own PostgreSQL under valgrind; writes dist/geneva.sql first; needs valgrind). MICROFLAGS as for bench-sql, e.g. MICROFLAGS='-n 200 -o HEAD~1 tree'
	bash bench/micro/instructions.sh $(MICROFLAGS)

GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml), vet the code, and check sql/'s shape (TestSQLShape)
	$(GOLANGCI_LINT) run ./...
	$(GO) vet ./...
	$(GO) test -count=1 -run '^TestSQLShape$$' .

.PHONY: sql
sql: ## Write dist/geneva.sql, the single-file psql install
	$(GO) run ./cmd/geneva sql > dist/geneva.sql

.PHONY: dashboard
dashboard: ## Serve the web dashboard for $DATABASE_URL at 127.0.0.1:8080 until interrupted
	$(GO) run ./cmd/geneva dashboard

# The dashboard's front-end pieces, fetched from the npm registry with `npm
# pack` (no install scripts run) and committed under dashboard/assets, where
# go:embed takes them into the binary: Node.js is needed only to refresh them.
# htmx: 17 kB gzipped, no dependencies and no build step, so the pages stay
# server-rendered html/template; the 2.x line, which the templates and the
# browser test were written against (4.x is a new major version).
HTMX_VERSION := 2.0.11

.PHONY: vendor-assets
vendor-assets: ## Refresh the dashboard's vendored htmx from the npm registry (needs npm)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  (cd "$$tmp" && npm pack --silent htmx.org@$(HTMX_VERSION) >/dev/null) && \
	  tar -xzf "$$tmp"/htmx.org-$(HTMX_VERSION).tgz -C "$$tmp" && \
	  cp "$$tmp"/package/dist/htmx.min.js dashboard/assets/htmx.min.js && \
	  cp "$$tmp"/package/LICENSE dashboard/assets/htmx.LICENSE && \
	  echo "dashboard/assets: htmx.org $(HTMX_VERSION)"

.PHONY: migrate
migrate: ## Install or upgrade the schema in $DATABASE_URL
	$(GO) run ./cmd/geneva migrate
