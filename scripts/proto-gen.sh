#!/usr/bin/env bash
# Regenerates proto/*pb Go packages from proto/*.proto (make proto).
# Installs protoc (Debian's protobuf-compiler) and the pinned Go plugins
# when missing. The generated code is committed; CI does not run this.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler
fi
bin="${HOME}/.cache/shoal-tools/bin"
mkdir -p "$bin"
[ -x "$bin/protoc-gen-go" ] || GOBIN="$bin" go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
[ -x "$bin/protoc-gen-go-grpc" ] || GOBIN="$bin" go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.1
export PATH="$bin:$PATH"
protoc -I proto \
  --go_out=. --go_opt=module=github.com/shoaldb/shoal \
  --go-grpc_out=. --go-grpc_opt=module=github.com/shoaldb/shoal \
  proto/*.proto
