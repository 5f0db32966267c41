# Shared by the bench scripts (sourced, not run): find free loopback ports,
# start a private MariaDB and a shoal server, wait until they answer.
# Expects: WORK (scratch dir), ROOT (repo root), MARIADB_BUFFER_POOL,
# optional SHOAL_BIN, a log function; sets PORT[...], MARIADB_PID, SHOAL_PID.

free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

wait_ready() { # port pid name
	for _ in $(seq 1 600); do
		kill -0 "$2" 2>/dev/null || { log "$3 exited during start"; return 1; }
		mariadb --no-defaults -h 127.0.0.1 -P "$1" -u root --protocol=TCP -e 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	log "$3 not ready after 60s"
	return 1
}

declare -A PORT
start_mariadb() {
	local mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	local install=$(command -v mariadb-install-db || echo /usr/bin/mariadb-install-db)
	mkdir -p "$WORK/mariadb"
	"$install" --no-defaults --datadir="$WORK/mariadb/data" --auth-root-authentication-method=normal \
		--skip-test-db --user=root >"$WORK/mariadb/install.log" 2>&1 || { log "mariadb-install-db failed"; cat "$WORK/mariadb/install.log" >&2; return 1; }
	PORT[mariadb]=$(free_port)
	"$mariadbd" --no-defaults --datadir="$WORK/mariadb/data" --port="${PORT[mariadb]}" --bind-address=127.0.0.1 \
		--socket="$WORK/mariadb/mysqld.sock" --pid-file="$WORK/mariadb/mysqld.pid" --user=root \
		--skip-grant-tables --skip-name-resolve --max-connections=2000 \
		--innodb-buffer-pool-size="$MARIADB_BUFFER_POOL" --innodb-log-file-size=512M \
		--innodb-flush-log-at-trx-commit=1 --log-error="$WORK/mariadb/error.log" >/dev/null 2>&1 &
	MARIADB_PID=$!
	wait_ready "${PORT[mariadb]}" "$MARIADB_PID" mariadb || { tail -20 "$WORK/mariadb/error.log" >&2; return 1; }
	log "mariadb $(mariadb --no-defaults -h 127.0.0.1 -P "${PORT[mariadb]}" -u root -N -e 'SELECT VERSION()') on 127.0.0.1:${PORT[mariadb]}"
}

start_shoal() {
	if [ -n "${SHOAL_BIN:-}" ]; then
		cp "$SHOAL_BIN" "$WORK/shoal" || return 1
	else
		log "building shoal"
		(cd "$ROOT" && go build -o "$WORK/shoal" ./cmd/shoal) || { log "shoal does not build"; return 1; }
	fi
	PORT[shoal]=$(free_port)
	"$WORK/shoal" server --host 127.0.0.1 --port "${PORT[shoal]}" --status-port 0 \
		--data-dir "$WORK/shoal-data" --log-level warn >"$WORK/shoal.log" 2>&1 &
	SHOAL_PID=$!
	wait_ready "${PORT[shoal]}" "$SHOAL_PID" shoal || { tail -20 "$WORK/shoal.log" >&2; return 1; }
	log "shoal $("$WORK/shoal" version) on 127.0.0.1:${PORT[shoal]}"
}

# start_cluster: `shoal playground` (3 PD, 3 stores keeping 3 replicas, 2 SQL
# nodes, HAProxy in front) from the same binary as start_shoal, on a free
# block of ports; PORT[cluster] is HAProxy's. Sets CLUSTER_PID.
start_cluster() {
	if [ ! -x "$WORK/shoal" ]; then
		if [ -n "${SHOAL_BIN:-}" ]; then cp "$SHOAL_BIN" "$WORK/shoal" || return 1
		else (cd "$ROOT" && go build -o "$WORK/shoal" ./cmd/shoal) || { log "shoal does not build"; return 1; }; fi
	fi
	local base
	for _ in $(seq 1 20); do
		base=$((20000 + (RANDOM % 300) * 120))
		local busy=0
		for off in 0 1 2 10 11 12 20 21 22 30 31 32; do
			(exec 3<>"/dev/tcp/127.0.0.1/$((base + off))") 2>/dev/null && busy=1
		done
		[ "$busy" = 0 ] && break
	done
	PORT[cluster]=$base
	"$WORK/shoal" playground --pd 3 --store 3 --sql 2 --base-port "$base" --log-level warn \
		--region-split-size "${CLUSTER_SPLIT_SIZE:-96MiB}" --data-dir "$WORK/cluster" >"$WORK/cluster.log" 2>&1 &
	CLUSTER_PID=$!
	for _ in $(seq 1 1200); do
		kill -0 "$CLUSTER_PID" 2>/dev/null || { log "playground exited during start"; tail -20 "$WORK/cluster.log" >&2; return 1; }
		mariadb --no-defaults -h 127.0.0.1 -P "$base" -u root --protocol=TCP -e 'SELECT 1' >/dev/null 2>&1 && {
			log "cluster (3 PD, 3 stores, 2 SQL nodes, HAProxy) on 127.0.0.1:$base"
			return 0
		}
		sleep 0.1
	done
	log "cluster not ready after 120s"; tail -20 "$WORK/cluster.log" >&2
	return 1
}
