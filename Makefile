# neateval. `make test` is what CI runs.

GO ?= go

.PHONY: build test run

build:
	$(GO) build -o bin/neateval ./cmd/neateval

test:
	$(GO) vet ./... && $(GO) test ./...

run:
	$(GO) run ./cmd/neateval run --config config.toml
