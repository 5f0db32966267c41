#!/usr/bin/env bash
# A/B of two shoal builds on the embedded server (and, optionally, the new
# build with the sysbench tables under another collation): each variant
# gets a fresh server and data dir per round, rounds interleaved so the
# variants share the machine's state; prints median TPS and the ratios.
# A benchmark, not a test: no assertions.
#
# Usage: OLD_BIN=path NEW_BIN=path scripts/bench-ab.sh
# Env:   ROUNDS=3 TIME=15 THREADS=16 TABLES=4 TABLE_SIZE=10000
#        WORKLOADS="oltp_point_select oltp_read_only"
#        COLLATION=utf8mb4_0900_ai_ci (adds the new build with the tables
#        created under it; sysbench 1.0.20 has no table-options flag, so it
#        rides in the engine clause: /*! ENGINE = innodb COLLATE=... */)
set -uo pipefail
: "${OLD_BIN:?OLD_BIN=path to the baseline shoal binary}" "${NEW_BIN:?NEW_BIN=path to the shoal binary under test}"
ROUNDS=${ROUNDS:-3}; TIME=${TIME:-15}; THREADS=${THREADS:-16}; TABLES=${TABLES:-4}; TABLE_SIZE=${TABLE_SIZE:-10000}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
COLLATION=${COLLATION:-}
WORK=$(mktemp -d /tmp/shoal-bench-ab.XXXXXX)
PID=""
log() { echo "[bench-ab $(date +%H:%M:%S)] $*" >&2; }
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
port() { for _ in $(seq 100); do local p=$((20000 + RANDOM % 40000)); (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }; done; return 1; }

declare -A TPS
variant() { # name binary engine-clause
	local name=$1 bin=$2 engine=$3 p dir=$WORK/$1.$r
	p=$(port) || return 1
	mkdir -p "$dir"
	"$bin" server --host 127.0.0.1 --port "$p" --status-port 0 --data-dir "$dir/data" --log-level warn >"$dir/log" 2>&1 &
	PID=$!
	for _ in $(seq 300); do mariadb --no-defaults -h 127.0.0.1 -P "$p" -u root -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
	mariadb --no-defaults -h 127.0.0.1 -P "$p" -u root -e 'CREATE DATABASE sbtest' || return 1
	local common="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root --mysql-db=sbtest --tables=$TABLES --table-size=$TABLE_SIZE"
	sysbench oltp_read_only $common ${engine:+--mysql_storage_engine="$engine"} --threads=4 prepare >"$dir/prepare.log" 2>&1 ||
		{ log "$name: prepare failed"; tail -3 "$dir/prepare.log" >&2; }
	for wl in $WORKLOADS; do
		local t
		t=$(sysbench "$wl" $common --threads="$THREADS" --time="$TIME" --report-interval=0 run 2>&1 | awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
		TPS[$name,$wl]+=" $t"
		log "round $r: $name $wl $t"
	done
	kill "$PID"; wait "$PID" 2>/dev/null; PID=""
}
for r in $(seq 1 "$ROUNDS"); do
	variant old "$OLD_BIN" ""
	variant new "$NEW_BIN" ""
	[ -n "$COLLATION" ] && variant coll "$NEW_BIN" "innodb COLLATE=$COLLATION"
done

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2] + v[NR/2+1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.3f", a/b; else print "n/a" }'; }
echo "sysbench: $TABLES tables x $TABLE_SIZE rows, $THREADS threads, ${TIME}s per run, median of $ROUNDS interleaved rounds ($(nproc) CPUs)"
echo
if [ -n "$COLLATION" ]; then
	echo "| workload | old TPS | new TPS | new/old | new, $COLLATION TPS | $COLLATION/default |"
	echo "|---|---:|---:|---:|---:|---:|"
else
	echo "| workload | old TPS | new TPS | new/old |"
	echo "|---|---:|---:|---:|"
fi
for wl in $WORKLOADS; do
	o=$(echo "${TPS[old,$wl]:-}" | median); n=$(echo "${TPS[new,$wl]:-}" | median)
	if [ -n "$COLLATION" ]; then
		c=$(echo "${TPS[coll,$wl]:-}" | median)
		echo "| $wl | $o | $n | $(ratio "$n" "$o") | $c | $(ratio "$c" "$n") |"
	else
		echo "| $wl | $o | $n | $(ratio "$n" "$o") |"
	fi
done
