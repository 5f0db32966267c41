#!/usr/bin/env bash
# Prints the path of a go-tpc binary (github.com/pingcap/go-tpc v1.0.12),
# building it first when needed. `go install ...@v1.0.12` does not work for
# go-tpc, so this downloads the module with `go mod download`, copies it to a
# temp dir and builds ./cmd/go-tpc there, into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/shoal-tools/go-tpc-v1.0.12/go-tpc
# which later runs reuse. GO_TPC=path uses a binary of your own instead.
# Used by scripts/test.sh (for TestTPCC) and scripts/bench-tpcc.sh.
set -uo pipefail
VERSION=v1.0.12
log() { echo "[go-tpc-path] $*" >&2; }

if [ -n "${GO_TPC:-}" ]; then
	[ -x "$GO_TPC" ] || { log "GO_TPC=$GO_TPC is not an executable"; exit 1; }
	echo "$GO_TPC"
	exit 0
fi
dir="${XDG_CACHE_HOME:-$HOME/.cache}/shoal-tools/go-tpc-$VERSION"
if [ -x "$dir/go-tpc" ]; then
	echo "$dir/go-tpc"
	exit 0
fi
command -v go >/dev/null || { log "go is not installed"; exit 1; }
log "building go-tpc $VERSION into $dir"
src=$(cd / && go mod download -json "github.com/pingcap/go-tpc@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -n "$src" ] && [ -d "$src" ] || { log "go mod download github.com/pingcap/go-tpc@$VERSION failed"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/src" && chmod -R u+w "$tmp/src" &&
	(cd "$tmp/src" && go build -o "$tmp/go-tpc" ./cmd/go-tpc) &&
	mkdir -p "$dir" && mv "$tmp/go-tpc" "$dir/go-tpc" || { log "building go-tpc failed"; exit 1; }
echo "$dir/go-tpc"
