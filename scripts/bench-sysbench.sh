#!/usr/bin/env bash
# Side-by-side sysbench: shoal (built from this tree) vs MariaDB (Debian's
# mariadbd), both on loopback with their own data directories under a temp
# dir, workloads interleaved (shoal, mariadb, shoal, ...). Prints a table
#   workload | shoal TPS | MariaDB TPS | ratio | shoal p95 ms | MariaDB p95 ms
# and stops both servers at the end. A benchmark, not a test: no assertions.
#
# Usage: scripts/bench-sysbench.sh
# Env:   TABLES=4 TABLE_SIZE=100000 THREADS=16 TIME=20
#        WORKLOADS="oltp_point_select oltp_read_only ..."  TARGETS="shoal mariadb"
#        (add "cluster" for a `shoal playground` cluster: 3 PD, 3 stores, 3
#        replicas, 2 SQL nodes behind HAProxy; CLUSTER_SPLIT_SIZE=96MiB)
#        SHOAL_BIN=path (prebuilt binary instead of building the tree)
#        MARIADB_BUFFER_POOL=1G  KEEP=1 (keep the temp dir)  OUT=file.md (also write the table there)
set -uo pipefail

TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
THREADS=${THREADS:-16}
TIME=${TIME:-20}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_read_write oltp_write_only oltp_update_index oltp_update_non_index oltp_insert"}
TARGETS=${TARGETS:-"shoal mariadb"}
MARIADB_BUFFER_POOL=${MARIADB_BUFFER_POOL:-1G}
IGNORE_ERRORS=${IGNORE_ERRORS:-1213,1205,1020,9007,8028,8022}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/shoal-bench.XXXXXX)
SHOAL_PID=""
MARIADB_PID=""
CLUSTER_PID=""

log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

cleanup() {
	for pid in $SHOAL_PID $MARIADB_PID $CLUSTER_PID; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in $SHOAL_PID $MARIADB_PID $CLUSTER_PID; do
		for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	done
	if [ "${KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in sysbench mariadb; do
	command -v "$tool" >/dev/null || { echo "bench: $tool not installed (apt-get install sysbench mariadb-client mariadb-server)" >&2; exit 1; }
done

. "$ROOT/scripts/lib-servers.sh"

sb() { # target workload command [extra...]
	local t=$1 w=$2 c=$3
	shift 3
	sysbench "$w" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="${PORT[$t]}" --mysql-user=root \
		--mysql-password= --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" "$@" "$c"
}

declare -A UP TPS P95
for t in $TARGETS; do
	if "start_$t"; then UP[$t]=1; else UP[$t]=0; log "$t unavailable: its columns will say n/a"; fi
done

for t in $TARGETS; do
	[ "${UP[$t]}" = 1 ] || continue
	log "$t: prepare $TABLES tables x $TABLE_SIZE rows"
	start=$(date +%s)
	if mariadb --no-defaults -h 127.0.0.1 -P "${PORT[$t]}" -u root --protocol=TCP -e 'CREATE DATABASE sbtest' &&
		sb "$t" oltp_common prepare --threads="$TABLES" >"$WORK/$t.prepare.log" 2>&1 &&
		# sysbench's prepare exits 0 when one of its threads failed: count.
		! grep -q FATAL "$WORK/$t.prepare.log"; then
		log "$t: prepared in $(($(date +%s) - start))s"
		mariadb --no-defaults -h 127.0.0.1 -P "${PORT[$t]}" -u root --protocol=TCP -D sbtest \
			-e "$(for i in $(seq 1 "$TABLES"); do echo "ANALYZE TABLE sbtest$i;"; done)" >/dev/null 2>&1 || true
	else
		log "$t: prepare failed"; tail -5 "$WORK/$t.prepare.log" >&2; UP[$t]=0
	fi
done

for w in $WORKLOADS; do
	for t in $TARGETS; do
		TPS[$t,$w]=n/a; P95[$t,$w]=n/a
		[ "${UP[$t]}" = 1 ] || continue
		log "$t: $w, $THREADS threads, ${TIME}s"
		out="$WORK/$t.$w.log"
		if sb "$t" "$w" run --threads="$THREADS" --time="$TIME" --report-interval=0 \
			--mysql-ignore-errors="$IGNORE_ERRORS" >"$out" 2>&1; then
			TPS[$t,$w]=$(awk '/transactions:/ { gsub(/\(/, "", $3); print $3; exit }' "$out")
			P95[$t,$w]=$(awk '/95th percentile:/ { print $3; exit }' "$out")
		else
			TPS[$t,$w]=FAIL; P95[$t,$w]=FAIL
			log "$t: $w failed:"; tail -5 "$out" >&2
		fi
		if [ -n "$SHOAL_PID" ] && [ "$t" = shoal ] && ! kill -0 "$SHOAL_PID" 2>/dev/null; then
			log "shoal died"; tail -20 "$WORK/shoal.log" >&2; UP[shoal]=0
		fi
	done
done

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "n/a" }'
}
{
	echo
	echo "sysbench: $TABLES tables x $TABLE_SIZE rows, $THREADS threads, ${TIME}s per workload ($(nproc) CPUs)"
	echo
	if [[ " $TARGETS " == *" cluster "* ]]; then
		echo "| workload | shoal TPS | cluster TPS | MariaDB TPS | shoal/MariaDB | cluster/MariaDB | shoal p95 ms | cluster p95 ms | MariaDB p95 ms |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for w in $WORKLOADS; do
			s=${TPS[shoal,$w]:-n/a} c=${TPS[cluster,$w]:-n/a} m=${TPS[mariadb,$w]:-n/a}
			echo "| $w | $s | $c | $m | $(ratio "$s" "$m") | $(ratio "$c" "$m") | ${P95[shoal,$w]:-n/a} | ${P95[cluster,$w]:-n/a} | ${P95[mariadb,$w]:-n/a} |"
		done
	else
		echo "| workload | shoal TPS | MariaDB TPS | ratio | shoal p95 ms | MariaDB p95 ms |"
		echo "|---|---:|---:|---:|---:|---:|"
		for w in $WORKLOADS; do
			s=${TPS[shoal,$w]:-n/a} m=${TPS[mariadb,$w]:-n/a}
			echo "| $w | $s | $m | $(ratio "$s" "$m") | ${P95[shoal,$w]:-n/a} | ${P95[mariadb,$w]:-n/a} |"
		done
	fi
} | tee ${OUT:+"$OUT"}
