#!/usr/bin/env bash
# What authentication, privilege checks and TLS cost on the hot path: one
# embedded shoal server, sysbench run as root (plain TCP), as an account
# holding only table-level grants on the sysbench tables (plain TCP), and as
# root over TLS, interleaved per round so the three share the machine's
# state. Prints per workload the median TPS of each and the ratios
# grants/root and TLS/plain. A benchmark, not a test: no assertions.
#
# Usage: scripts/bench-auth.sh
# Env:   TABLES=4 TABLE_SIZE=10000 THREADS=16 TIME=15 ROUNDS=3
#        WORKLOADS="oltp_point_select oltp_read_write"
#        SHOAL_BIN=path (prebuilt binary instead of building the tree)  KEEP=1
set -uo pipefail

TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
THREADS=${THREADS:-16}
TIME=${TIME:-15}
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_write"}
IGNORE_ERRORS=${IGNORE_ERRORS:-1213,1205,1020,9007,8028,8022}
MARIADB_BUFFER_POOL=1G # lib-servers.sh expects it

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/shoal-bench-auth.XXXXXX)
SHOAL_PID=""
MARIADB_PID=""

log() { echo "[bench-auth $(date +%H:%M:%S)] $*" >&2; }

cleanup() {
	[ -n "$SHOAL_PID" ] && kill -TERM "$SHOAL_PID" 2>/dev/null
	for _ in $(seq 1 300); do [ -z "$SHOAL_PID" ] || ! kill -0 "$SHOAL_PID" 2>/dev/null && break; sleep 0.1; done
	[ -n "$SHOAL_PID" ] && kill -KILL "$SHOAL_PID" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in sysbench mariadb; do
	command -v "$tool" >/dev/null || { echo "bench-auth: $tool not installed" >&2; exit 1; }
done
. "$ROOT/scripts/lib-servers.sh"

start_shoal || exit 1
P=${PORT[shoal]}
sql() { mariadb --no-defaults -h 127.0.0.1 -P "$P" -u root --protocol=TCP "$@"; }

sb() { # mode workload command [extra...]; mode: root | grants | tls
	local mode=$1 w=$2 c=$3 user=root pass= ssl=off
	shift 3
	case $mode in
	grants) user=sbuser pass=sbpass ;;
	tls) ssl=on ;;
	esac
	# sysbench 1.0 reads its TLS files from fixed names in the working
	# directory (client-key.pem, client-cert.pem, cacert.pem).
	(cd "$WORK/tls-client" && sysbench "$w" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$P" --mysql-user="$user" \
		--mysql-password="$pass" --mysql-ssl="$ssl" --mysql-db=sbtest --tables="$TABLES" \
		--table-size="$TABLE_SIZE" "$@" "$c")
}

# A client certificate signed by the CA the server generated in its data
# directory, for sysbench's TLS runs.
D=$(find "$WORK/shoal-data" -name ca-key.pem -printf '%h' -quit)
mkdir -p "$WORK/tls-client" && cd "$WORK/tls-client" &&
	cp "$D/ca.pem" cacert.pem &&
	openssl req -newkey rsa:2048 -nodes -keyout client-key.pem -subj /CN=sysbench -out client.csr 2>/dev/null &&
	openssl x509 -req -in client.csr -CA "$D/ca.pem" -CAkey "$D/ca-key.pem" -CAcreateserial -days 1 \
		-out client-cert.pem 2>/dev/null || { log "cannot make a client certificate from $D"; exit 1; }
cd "$ROOT"

log "prepare $TABLES tables x $TABLE_SIZE rows"
sql -e 'CREATE DATABASE sbtest' || exit 1
sb root oltp_common prepare --threads="$TABLES" >"$WORK/prepare.log" 2>&1 && ! grep -q FATAL "$WORK/prepare.log" ||
	{ log "prepare failed"; tail -5 "$WORK/prepare.log" >&2; exit 1; }
# Table-level grants only: the account can reach nothing else, so every
# statement walks the table level of the privilege check.
{
	echo "CREATE USER 'sbuser'@'%' IDENTIFIED WITH mysql_native_password BY 'sbpass';"
	for i in $(seq 1 "$TABLES"); do
		echo "GRANT SELECT, INSERT, UPDATE, DELETE ON sbtest.sbtest$i TO 'sbuser'@'%';"
		echo "ANALYZE TABLE sbtest.sbtest$i;"
	done
} | sql >/dev/null || { log "grants failed"; exit 1; }
sb tls oltp_point_select run --threads=1 --time=1 >"$WORK/tls-probe.log" 2>&1 ||
	{ log "a TLS run failed:"; tail -5 "$WORK/tls-probe.log" >&2; exit 1; }

declare -A RUNS
MODES=(root grants tls)
for r in $(seq 1 "$ROUNDS"); do
	# Each run's writes age the tables (more versions to step over), so a
	# mode always run first would gain: the order rotates every round.
	order=()
	for i in 0 1 2; do order+=("${MODES[$(( (i + r - 1) % 3 ))]}"); done
	for w in $WORKLOADS; do
		for m in "${order[@]}"; do
			out="$WORK/$m.$w.$r.log"
			log "round $r/$ROUNDS: $w as $m, $THREADS threads, ${TIME}s"
			if sb "$m" "$w" run --threads="$THREADS" --time="$TIME" --report-interval=0 \
				--mysql-ignore-errors="$IGNORE_ERRORS" >"$out" 2>&1; then
				RUNS[$m,$w]+=" $(awk '/transactions:/ { gsub(/\(/, "", $3); print $3; exit }' "$out")"
			else
				log "$m $w failed:"; tail -5 "$out" >&2
			fi
		done
	done
done

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2] + v[NR/2+1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.3f", a/b; else print "n/a" }'; }

echo
echo "sysbench: $TABLES tables x $TABLE_SIZE rows, $THREADS threads, ${TIME}s per run, median of $ROUNDS interleaved rounds ($(nproc) CPUs)"
echo
echo "| workload | root TPS | table-grant account TPS | root over TLS TPS | grants/root | TLS/plain |"
echo "|---|---:|---:|---:|---:|---:|"
for w in $WORKLOADS; do
	a=$(echo "${RUNS[root,$w]:-}" | median) g=$(echo "${RUNS[grants,$w]:-}" | median) t=$(echo "${RUNS[tls,$w]:-}" | median)
	echo "| $w | $a | $g | $t | $(ratio "$g" "$a") | $(ratio "$t" "$a") |"
done
