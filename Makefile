# Conveniences; the README's two commands work without make.
VERSION ?= $(shell git describe --tags --match "v*" 2>/dev/null || echo v0.1.0-dev-$$(git rev-parse --short HEAD 2>/dev/null))
GITHASH ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.gitHash=$(GITHASH) -X main.buildTime=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build server test unit acceptance slt bench bench-tpcc fmt vet proto

build:
	go build -ldflags "$(LDFLAGS)" -o bin/shoal ./cmd/shoal

server: build
	./bin/shoal server

test:
	./scripts/test.sh

unit:
	go test $$(go list ./... | grep -v /tests/acceptance)

acceptance:
	go test -count=1 -timeout 60m -v ./tests/acceptance/

# Run sqllogictest files by hand against a running server: make slt FILES=../shared/sqllogictest/select1.test
FILES ?= ../shared/sqllogictest/select1.test
ADDR ?= 127.0.0.1:4000
slt:
	go run ./tests/sqllogictest/cmd/slt -addr $(ADDR) $(FILES)

bench:
	./scripts/bench-sysbench.sh

bench-tpcc:
	./scripts/bench-tpcc.sh

fmt:
	gofmt -l -w cmd config status tests

vet:
	go vet ./...

# Regenerates the gRPC/protobuf code under proto/ from proto/*.proto (needs
# protoc, Debian's protobuf-compiler, and the pinned Go plugins, which
# scripts/proto-gen.sh installs when missing).
proto:
	./scripts/proto-gen.sh
