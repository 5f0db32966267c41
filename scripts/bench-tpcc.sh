#!/usr/bin/env bash
# Side-by-side TPC-C with go-tpc: shoal (built from this tree) vs MariaDB
# (Debian's mariadbd), both on loopback with their own data directories under
# a temp dir, one after the other (prepare and run shoal, then MariaDB).
# Prints
#   | target | prepare s | tpmC | tpmTotal | NEW_ORDER p95 ms | errors |
# and the ratio of tpmC shoal/MariaDB, then stops both servers. A benchmark,
# not a test (TestTPCC checks consistency): go-tpc's consistency checks are
# off unless CHECK=1, because MariaDB 10.11 spends more than 10 minutes per
# warehouse on condition 3.3.2.10 (a correlated subquery over order_line).
#
# Usage: scripts/bench-tpcc.sh
# Env:   WAREHOUSES=4 THREADS=16 TIME=60 (seconds) PREPARE_THREADS=4
#        TARGETS="shoal mariadb"  (add "cluster": a `shoal playground`, 3 PD, 3
#        stores, 3 replicas, 2 SQL nodes behind HAProxy)  SHOAL_BIN=path (prebuilt binary)
#        CHECK=1 (prepare with go-tpc's check, and `check` after the run)
#        GO_TPC=path (go-tpc binary; default: scripts/go-tpc-path.sh builds it)
#        MARIADB_BUFFER_POOL=1G  KEEP=1 (keep the temp dir)  OUT=file.md (also write the table there)
set -uo pipefail

WAREHOUSES=${WAREHOUSES:-4}
THREADS=${THREADS:-16}
TIME=${TIME:-60}
PREPARE_THREADS=${PREPARE_THREADS:-4}
CHECK=${CHECK:-0}
TARGETS=${TARGETS:-"shoal mariadb"}
MARIADB_BUFFER_POOL=${MARIADB_BUFFER_POOL:-1G}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/shoal-bench-tpcc.XXXXXX)
SHOAL_PID=""
MARIADB_PID=""
CLUSTER_PID=""

log() { echo "[bench-tpcc $(date +%H:%M:%S)] $*" >&2; }

stop() { # pid...
	for pid in "$@"; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "$@"; do
		for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	done
}
cleanup() {
	stop $SHOAL_PID $MARIADB_PID $CLUSTER_PID
	if [ "${KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v mariadb >/dev/null || { log "mariadb client not installed (apt-get install mariadb-client mariadb-server)"; exit 1; }
GOTPC=$("$ROOT/scripts/go-tpc-path.sh") || { log "no go-tpc"; exit 1; }

. "$ROOT/scripts/lib-servers.sh"

tpcc() { # target command [flags...]
	local t=$1 c=$2
	shift 2
	"$GOTPC" tpcc "$c" -H 127.0.0.1 -P "${PORT[$t]}" -U root -D tpcc --warehouses "$WAREHOUSES" "$@"
}

# Lines of go-tpc output that report a failure (go-tpc exits 0 regardless).
errors_in() { grep -Eic 'error|failed|fatal|panic|_ERR\b' "$1"; }

declare -A PREP TPMC TPMT P95 ERRS
for t in $TARGETS; do
	PREP[$t]=n/a TPMC[$t]=n/a TPMT[$t]=n/a P95[$t]=n/a ERRS[$t]=n/a
	if ! "start_$t"; then log "$t unavailable"; continue; fi
	mariadb --no-defaults -h 127.0.0.1 -P "${PORT[$t]}" -u root --protocol=TCP -e 'CREATE DATABASE tpcc' || continue
	nocheck=--no-check; [ "$CHECK" = 1 ] && nocheck=""
	log "$t: prepare $WAREHOUSES warehouses ($PREPARE_THREADS threads${nocheck:+, no check})"
	start=$(date +%s)
	if tpcc "$t" prepare --threads "$PREPARE_THREADS" $nocheck >"$WORK/$t.prepare.log" 2>&1; then
		PREP[$t]=$(($(date +%s) - start))
		log "$t: prepared in ${PREP[$t]}s"
	else
		log "$t: prepare failed"; tail -5 "$WORK/$t.prepare.log" >&2
	fi
	log "$t: run $THREADS threads, ${TIME}s"
	tpcc "$t" run --threads "$THREADS" --time "${TIME}s" --interval 30s >"$WORK/$t.run.log" 2>&1 || log "$t: run exited non-zero"
	grep -E '^\[Summary\]|^tpmC' "$WORK/$t.run.log" >&2
	: >"$WORK/$t.check.log"
	if [ "$CHECK" = 1 ]; then
		tpcc "$t" check --threads "$PREPARE_THREADS" >"$WORK/$t.check.log" 2>&1 || log "$t: check exited non-zero"
	fi
	ERRS[$t]=$(($(errors_in "$WORK/$t.prepare.log") + $(errors_in "$WORK/$t.run.log") + $(errors_in "$WORK/$t.check.log")))
	[ "${ERRS[$t]}" = 0 ] || { log "$t: go-tpc reported errors:"; grep -Ehi 'error|failed|fatal|panic|_ERR\b' "$WORK/$t".*.log | head -10 >&2; }
	TPMC[$t]=$(sed -n 's/^tpmC: \([0-9.]*\), tpmTotal: \([0-9.]*\),.*/\1/p' "$WORK/$t.run.log")
	TPMT[$t]=$(sed -n 's/^tpmC: \([0-9.]*\), tpmTotal: \([0-9.]*\),.*/\2/p' "$WORK/$t.run.log")
	P95[$t]=$(sed -n 's/^\[Summary\] NEW_ORDER .*95th(ms): \([0-9.]*\),.*/\1/p' "$WORK/$t.run.log")
	: "${TPMC[$t]:=n/a}" "${TPMT[$t]:=n/a}" "${P95[$t]:=n/a}"
	# One server at a time: the machine is small.
	case $t in
	shoal) stop $SHOAL_PID; SHOAL_PID="" ;;
	cluster) stop $CLUSTER_PID; CLUSTER_PID="" ;;
	*) stop $MARIADB_PID; MARIADB_PID="" ;;
	esac
done

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "n/a" }'
}
{
	echo
	echo "go-tpc tpcc: $WAREHOUSES warehouses, $THREADS threads, ${TIME}s run, prepare with $PREPARE_THREADS threads$([ "$CHECK" = 1 ] && echo ' and checks') ($(nproc) CPUs)"
	echo
	echo "| target | prepare s | tpmC | tpmTotal | NEW_ORDER p95 ms | go-tpc error lines |"
	echo "|---|---:|---:|---:|---:|---:|"
	for t in $TARGETS; do
		name=$t; [ "$t" = mariadb ] && name=MariaDB
		echo "| $name | ${PREP[$t]} | ${TPMC[$t]} | ${TPMT[$t]} | ${P95[$t]} | ${ERRS[$t]} |"
	done
	echo
	echo "tpmC ratio shoal/MariaDB: $(ratio "${TPMC[shoal]:-}" "${TPMC[mariadb]:-}")"
	case " $TARGETS " in *" cluster "*)
		echo "tpmC ratio cluster/MariaDB: $(ratio "${TPMC[cluster]:-}" "${TPMC[mariadb]:-}")" ;;
	esac
} | tee ${OUT:+"$OUT"}
