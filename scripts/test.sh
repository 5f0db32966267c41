#!/usr/bin/env bash
# The one test command (README, CI): installs what the tests need on a
# Debian machine (as root; skipped when already present), go-tpc and PyMySQL,
# downloads the Go modules, then runs the unit tests and the acceptance tests.
#
# Env: SKIP_INSTALL=1 (never apt-get or pip), GO_TPC=path (a go-tpc binary;
# default: built once into ~/.cache/shoal-tools), SHOAL_SLT_ALL=1 (whole sqllogictest
# corpus), SHOAL_TEST_TARGET=mariadb (acceptance tests against MariaDB),
# FUZZ_TIME=150000x (how many inputs each server fuzz target runs; about
# 20 s each here).
set -uo pipefail
cd "$(dirname "$0")/.."

log() { echo "[test.sh $(date +%H:%M:%S)] $*"; }

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

install_tools() {
	local need=()
	have sysbench || need+=(sysbench)
	have mysql || need+=(mariadb-client)
	have mariadbd || need+=(mariadb-server)
	have haproxy || need+=(haproxy)
	have python3 || need+=(python3 python3-pip)
	[ ${#need[@]} -eq 0 ] && { log "tools present: sysbench mysql mariadbd haproxy"; return 0; }
	if [ "${SKIP_INSTALL:-0}" = 1 ]; then log "missing ${need[*]} (SKIP_INSTALL=1)"; return 0; fi
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || { log "missing ${need[*]} and not root: install them with apt-get"; return 1; }
		sudo="sudo"
	fi
	command -v apt-get >/dev/null || { log "missing ${need[*]} and no apt-get"; return 1; }
	log "installing ${need[*]}"
	# Keep package scripts from starting the system MariaDB service: the
	# tests start private servers of their own.
	local policy=/usr/sbin/policy-rc.d added=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy" && added=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
	local rc=$?
	[ $added = 1 ] && $sudo rm -f "$policy"
	return $rc
}

# go-tpc for TestTPCC (scripts/go-tpc-path.sh builds it once into
# ~/.cache/shoal-tools; GO_TPC=path uses your own), exported as SHOAL_GO_TPC.
install_go_tpc() {
	local p
	p=$(scripts/go-tpc-path.sh) || return 1
	export SHOAL_GO_TPC=$p
	log "go-tpc: $SHOAL_GO_TPC"
}

# PyMySQL for TestPyMySQL, from PyPI.
install_pymysql() {
	command -v python3 >/dev/null || { log "python3 missing: TestPyMySQL will skip (fail in CI)"; return 0; }
	python3 -c 'import pymysql' 2>/dev/null && { log "PyMySQL present"; return 0; }
	if [ "${SKIP_INSTALL:-0}" = 1 ]; then log "missing PyMySQL (SKIP_INSTALL=1)"; return 0; fi
	log "installing PyMySQL"
	python3 -m pip install --quiet pymysql ||
		python3 -m pip install --quiet --user --break-system-packages pymysql ||
		log "installing PyMySQL failed"
}

command -v go >/dev/null || { log "go is not installed (Go 1.26 is required)"; exit 1; }
install_tools || exit 1
install_go_tpc || log "go-tpc unavailable: TestTPCC will skip (fail in CI)"
install_pymysql
log "go $(go env GOVERSION): downloading modules"
go mod download || exit 1

ACCEPT=github.com/shoaldb/shoal/tests/acceptance
mapfile -t UNIT < <(go list ./... | grep -v "^$ACCEPT\$")

log "unit tests (${#UNIT[@]} packages)"
go test -count=1 -timeout 20m "${UNIT[@]}"
unit_rc=$?

# Again with the invariant checks compiled in (store/internal/invariants),
# for the packages that have them.
log "unit tests with -tags invariants"
go test -count=1 -timeout 10m -tags invariants ./store/mvcc/ ./store/raftstore/ || unit_rc=1

# The protocol decoders' fuzz targets, each for a bounded number of inputs:
# they must not crash (a crasher is saved under server/testdata/fuzz and
# fails this). A count, not a duration: with a duration, Go 1.26's fuzz
# coordinator can fail a clean run with "context deadline exceeded" as the
# time runs out (golang/go#75804, fixed in Go 1.27).
fuzz_rc=0
for target in FuzzPacketReader FuzzHandshakeResponse FuzzStmtExecuteParams FuzzStmtSendLongData; do
	log "fuzz $target (${FUZZ_TIME:-150000x})"
	go test -run XXX -fuzz "^$target\$" -fuzztime "${FUZZ_TIME:-150000x}" ./server/ || fuzz_rc=1
done

log "acceptance tests"
ACC_LOG=${ACC_LOG:-$(mktemp -t shoal-acceptance.XXXXXX.log)}
go test -count=1 -timeout 60m -v "$ACCEPT" 2>&1 | tee "$ACC_LOG"
acc_rc=${PIPESTATUS[0]}

# A failed acceptance test's own lines again at the very end, so the reason
# is next to the verdict however long the passing tests' output was.
if [ $acc_rc -ne 0 ]; then
	log "acceptance tests failed; full log: $ACC_LOG; the failed tests' output follows"
	scripts/failure-digest.awk "$ACC_LOG"
fi

[ $unit_rc -eq 0 ] && [ $fuzz_rc -eq 0 ] && [ $acc_rc -eq 0 ]
