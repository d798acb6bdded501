# make loadtest: the main job. make test: the tests. Both set up what they need.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin
RUN_DIR ?= runs/latest

.PHONY: all build deps images test test-short loadtest loadtest-full model bench lint clean

all: build

deps:
	@scripts/ensure-deps.sh

build: deps
	$(GO) build -o $(BIN)/harness ./harness/cmd/harness
	@if [ -d targets/cmd/replica ]; then $(GO) build -o $(BIN)/replica ./targets/cmd/replica; fi
	@if [ -d targets/cmd/noop ]; then $(GO) build -o $(BIN)/noop ./targets/cmd/noop; fi

images: deps
	scripts/build-images.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...

# The tests: unit, real redis-server, real containers, and the load test in a quick
# time-scaled form.
test: deps images lint
	$(GO) test -race -count=1 -timeout 15m ./...

model: build
	$(BIN)/harness model ratelimit

loadtest: build
	$(BIN)/harness model ratelimit

# The full run at the documents' own time scale: every scenario, report.html and junit.xml
# in $(RUN_DIR). BASELINE=path/summary.json fails it on a regression.
loadtest-full: build images
	$(BIN)/harness loadtest --out $(RUN_DIR) $(if $(BASELINE),--baseline $(BASELINE)) $(LOADTEST_FLAGS)

bench: deps
	$(GO) test -run '^$$' -bench . -benchmem ./limiters

clean:
	rm -rf $(BIN) runs
