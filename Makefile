# Geneva's tasks. `make help` lists them.
#
# Without DATABASE_URL (or TEST_DATABASE_URL for the tests), the tasks that
# need a database start a throwaway PostgreSQL server and remove it afterwards.

GO ?= go
WITHPG := $(GO) run ./internal/cmd/withpg --

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the tasks
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_\/-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: demo
demo: ## Run the example workflows with a worker and show the dashboard (throwaway PostgreSQL unless DATABASE_URL is set)
	$(GO) run ./examples/demo

.PHONY: test
test: ## Run every test (starts a throwaway PostgreSQL unless TEST_DATABASE_URL is set)
ifdef TEST_DATABASE_URL
	$(GO) test ./...
else
	$(WITHPG) $(GO) test ./...
endif

.PHONY: test/race
test/race: ## Run every test with the race detector
ifdef TEST_DATABASE_URL
	$(GO) test -race ./...
else
	$(WITHPG) $(GO) test -race ./...
endif

.PHONY: bench
bench: ## Measure Geneva beside raw River on a durable and a non-durable server (a throwaway PostgreSQL unless DATABASE_URL is set); writes bench/RESULTS.md. BENCHFLAGS passes flags (go run ./cmd/geneva-bench -h)
	$(GO) run ./cmd/geneva-bench $(BENCHFLAGS)

GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml), vet the code, and check sql/'s shape (TestSQLShape)
	$(GOLANGCI_LINT) run ./...
	$(GO) vet ./...
	$(GO) test -count=1 -run '^TestSQLShape$$' .

.PHONY: sql
sql: ## Write dist/geneva.sql, the single-file psql install
	$(GO) run ./cmd/geneva sql > dist/geneva.sql

.PHONY: migrate
migrate: ## Install or upgrade the schema in $DATABASE_URL
	$(GO) run ./cmd/geneva migrate
