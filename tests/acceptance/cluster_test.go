package acceptance

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/playground"
	"github.com/shoaldb/shoal/tests/testserver"
)

// The reference reports' global variables, sent unchanged through HAProxy.
const referenceGlobals = "set global tidb_enable_async_commit = 1; set global tidb_enable_1pc = 1; set global tidb_guarantee_linearizability = 0; set global tidb_enable_clustered_index = 1; set global tidb_prepared_plan_cache_size = 1000; set global tidb_hashagg_final_concurrency = 1; set global tidb_hashagg_partial_concurrency = 1;"

var clusterWorkloads = []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only",
	"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete"}

// shoalHasSubcommands reports whether the binary lists every named
// subcommand in its usage.
func shoalHasSubcommands(names ...string) (bool, string) {
	out, _ := exec.Command(shoalBin, "help").CombinedOutput()
	for _, n := range names {
		if !strings.Contains(string(out), "\n  "+n+" ") {
			return false, n
		}
	}
	return true, ""
}

// TestClusterPlayground runs `shoal playground --pd 3 --store 3 --sql 2`
// (real haproxy in front of the SQL nodes, small region split size) and
// drives it through HAProxy: the reference reports' globals, sysbench
// prepare (4 x 10000) spread over at least 8 regions on every store, every
// oltp_* workload with zero errors, go-tpc (1 warehouse) prepare, run and
// check, and ADMIN CHECK TABLE on everything. Env: SHOAL_CLUSTER_SB_TIME
// (seconds per workload, default 5), SHOAL_CLUSTER_TPCC_TIME (default 20).
func TestClusterPlayground(t *testing.T) {
	if target != "shoal" {
		t.Skip("the cluster test runs shoal's own playground")
	}
	if ok, missing := shoalHasSubcommands("pd", "store", "sql", "playground"); !ok {
		t.Skipf("this shoal binary has no %q subcommand yet", missing)
	}
	sb := requireTool(t, "sysbench")
	requireTool(t, "haproxy")
	tpcc := goTPCBin(t)
	sbTimeSec := envInt("SHOAL_CLUSTER_SB_TIME", 5)
	tpccTime := envInt("SHOAL_CLUSTER_TPCC_TIME", 20)

	dir := t.TempDir()
	start := time.Now()
	pg, err := testserver.StartPlayground(testserver.PlaygroundOptions{
		Bin: shoalBin, PD: 3, Store: 3, SQL: 2, SplitSize: "1MiB",
		DataDir: filepath.Join(dir, "pg"), LogPath: filepath.Join(dir, "playground.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(90 * time.Second); err != nil {
			t.Errorf("playground stop: %v\n%s", err, pg.LogTail(3000))
		}
		if t.Failed() {
			t.Logf("playground log tail:\n%s", pg.LogTail(3000))
			for _, n := range []string{"sql-1", "sql-2", "store-1", "store-2", "store-3", "haproxy"} {
				t.Logf("%s log tail:\n%s", n, pg.ProcessLogTail(n, 1500))
			}
		}
	})
	t.Logf("playground ready in %s: haproxy %s, sql %v", time.Since(start).Round(time.Millisecond), pg.Layout.HAProxy, pg.Layout.SQL)
	s := pg.Server

	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the globals in one session, like a mysql CLI
	for _, q := range strings.Split(referenceGlobals, ";") {
		if q = strings.TrimSpace(q); q != "" {
			mustExec(t, db, q)
		}
	}
	mustExec(t, db, "CREATE DATABASE sbtest")
	sdb, err := s.Open("sbtest")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()

	// prepare: 4 threads, one table each, through HAProxy (so the CREATE
	// TABLEs run concurrently on both SQL nodes).
	common := append(sysbenchArgs(s, "sbtest"), fmt.Sprintf("--tables=%d", sbTables), fmt.Sprintf("--table-size=%d", sbTableSize))
	start = time.Now()
	runSysbench(t, sb, 5*time.Minute, append([]string{"oltp_common"}, append(common, fmt.Sprintf("--threads=%d", sbTables), "prepare")...)...)
	t.Logf("prepare %d tables x %d rows: %s", sbTables, sbTableSize, time.Since(start).Round(time.Millisecond))
	checkIndexes(t, sdb, "prepare")
	checkBothSQLNodes(t, pg)
	checkGrantsReachOtherNode(t, pg)
	checkRegionsSpread(t, pg, 8, 3)

	for _, w := range clusterWorkloads {
		var before []string
		if readOnlyWorkloads[w] {
			before = checksums(t, sdb)
		}
		args := append([]string{w}, common...)
		args = append(args, "--threads=4", fmt.Sprintf("--time=%d", sbTimeSec), "--db-ps-mode=auto", "--report-interval=0", "run")
		out, err := trySysbench(sb, time.Duration(sbTimeSec)*time.Second+2*time.Minute, args...)
		if err != nil {
			t.Errorf("%s: %v", w, err)
			if !pg.Running() {
				t.Fatalf("the playground died during %s", w)
			}
			continue
		}
		r, err := parseSysbench(out)
		if err != nil {
			t.Errorf("%s: %v\n%s", w, err, tail(out, 3000))
			continue
		}
		t.Logf("%-24s transactions=%d (%.1f tps) ignored-errors=%d p95=%.2fms", w, r.Transactions, r.TPS, r.Ignored, r.P95)
		if r.Transactions == 0 || r.Ignored != 0 {
			t.Errorf("%s: transactions=%d ignored errors=%d, want >0 and 0\n%s", w, r.Transactions, r.Ignored, tail(out, 2000))
		}
		if readOnlyWorkloads[w] {
			after := checksums(t, sdb)
			for i := range before {
				if before[i] != after[i] {
					t.Errorf("%s (read-only) changed sbtest%d: before %s, after %s", w, i+1, before[i], after[i])
				}
			}
		}
	}
	checkIndexes(t, sdb, "the oltp workloads")
	checkRegionsSpread(t, pg, 8, 3)
	if t.Failed() {
		t.FailNow()
	}

	// MVCC GC from here on with a 1 s life time, while go-tpc runs; a
	// transaction left open on one SQL node keeps its snapshot whichever
	// node runs the rounds.
	long := beginLongSnapshot(t, sdb)
	mustExec(t, db, "SET GLOBAL tidb_gc_life_time = '1s'")
	mustExec(t, db, "SET GLOBAL tidb_gc_run_interval = '1s'")
	for i := range 3 {
		mustExec(t, sdb, fmt.Sprintf("UPDATE sbtest1 SET c = 'after-%d' WHERE id = 1", i))
	}

	// go-tpc, 1 warehouse, through HAProxy.
	mustExec(t, db, "CREATE DATABASE tpcc")
	start = time.Now()
	out := runGoTPC(t, tpcc, s, 4*time.Minute, "prepare", "--warehouses=1", "--threads=4")
	t.Logf("go-tpc prepare (1 warehouse, with check): %s", time.Since(start).Round(time.Millisecond))
	if p := goTPCProblems(out); len(p) > 0 {
		t.Fatalf("go-tpc prepare: %d error lines, first: %q\n%s", len(p), p[:min(len(p), 5)], tailLines(out, 30))
	}
	if m := goTPCChecksMissing(out, 1, tpccPrepareConditions); len(m) > 0 {
		t.Fatalf("go-tpc prepare: consistency checks not run or not passed: %q\n%s", m, tailLines(out, 30))
	}
	start = time.Now()
	out = runGoTPC(t, tpcc, s, time.Duration(tpccTime)*time.Second+3*time.Minute,
		"run", "--warehouses=1", "--threads=4", "--time="+strconv.Itoa(tpccTime)+"s", "--interval=10s")
	t.Logf("go-tpc run (4 threads, %ds): %s", tpccTime, time.Since(start).Round(time.Millisecond))
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[Summary]") || strings.HasPrefix(l, "tpmC:") {
			t.Log(l)
		}
	}
	if p := goTPCProblems(out); len(p) > 0 {
		t.Errorf("go-tpc run: %d error lines, first: %q", len(p), p[:min(len(p), 5)])
	}
	counts := map[string]int{}
	for _, m := range reTPCCSummary.FindAllStringSubmatch(out, -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, txn := range tpccTransactions {
		if counts[txn] == 0 {
			t.Errorf("go-tpc run: no successful %s transactions", txn)
		}
	}
	out = runGoTPC(t, tpcc, s, 3*time.Minute, "check", "--warehouses=1", "--threads=4")
	if p := goTPCProblems(out); len(p) > 0 {
		t.Errorf("go-tpc check: %d error lines, first: %q", len(p), p[:min(len(p), 5)])
	}
	if m := goTPCChecksMissing(out, 1, tpccCheckConditions); len(m) > 0 {
		t.Errorf("go-tpc check: consistency checks not run or not passed: %q", m)
	}

	// Content: every table's indexes agree with its rows.
	tdb, err := s.Open("tpcc")
	if err != nil {
		t.Fatal(err)
	}
	defer tdb.Close()
	for _, tb := range []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"} {
		adminCheck(t, tdb, tb)
	}
	for i := 1; i <= sbTables; i++ {
		adminCheck(t, sdb, fmt.Sprintf("sbtest%d", i))
	}
	long.checkAndEnd(t)
	waitGCRoundAfter(t, pg, long.began)
	if n := regionCount(t, pg); n > 0 {
		t.Logf("regions at the end: %d", n)
	}
}

// checkBothSQLNodes asks each SQL node directly (not through HAProxy) for
// the same table contents: both serve the schema and data of the cluster.
func checkBothSQLNodes(t *testing.T, pg *testserver.Playground) {
	t.Helper()
	var sums []string
	for _, n := range pg.Layout.SQL {
		host, port, _ := strings.Cut(n.MySQL, ":")
		pn, _ := strconv.Atoi(port)
		node := &testserver.Server{Kind: "shoal", Host: host, Port: pn}
		db, err := node.Open("sbtest")
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, tableChecksum(t, db, "sbtest1"))
		db.Close()
	}
	for i := 1; i < len(sums); i++ {
		if sums[i] != sums[0] {
			t.Errorf("SQL nodes disagree on sbtest1: %q vs %q", sums[0], sums[i])
		}
	}
}

// grantPropagationBound is how long a GRANT or REVOKE made on one SQL
// node may take to be enforced on another: the nodes reload privileges on
// their 200 ms sync tick, so a second suffices on a quiet machine; the
// bound leaves room for a loaded CI machine, and the time seen is logged.
const grantPropagationBound = 5 * time.Second

// checkGrantsReachOtherNode: an account created and granted on the first
// SQL node logs in and reads on the second; a REVOKE on the second is
// enforced on the first.
func checkGrantsReachOtherNode(t *testing.T, pg *testserver.Playground) {
	t.Helper()
	if len(pg.Layout.SQL) < 2 {
		t.Fatal("the playground has fewer than 2 SQL nodes")
	}
	node := func(i int, user, pw string) *sql.DB {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", pg.Layout.SQL[i].MySQL, "sbtest"
		cfg.Timeout = 10 * time.Second
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxIdleConns(0) // every attempt logs in again
		return db
	}
	root1, root2 := node(0, "root", pg.Server.Password), node(1, "root", pg.Server.Password)
	defer root1.Close()
	defer root2.Close()
	mustExec(t, root1, "CREATE USER granted@'%' IDENTIFIED WITH mysql_native_password BY 'g'")
	mustExec(t, root1, "GRANT SELECT ON sbtest.sbtest1 TO granted@'%'")
	start := time.Now()
	user2 := node(1, "granted", "g")
	defer user2.Close()
	var n int
	for {
		err := user2.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n)
		if err == nil {
			break
		}
		if time.Since(start) > grantPropagationBound {
			t.Fatalf("a GRANT on sql-1 not enforced on sql-2 after %s: %v", grantPropagationBound, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("GRANT on sql-1 enforced on sql-2 after %s", time.Since(start).Round(time.Millisecond))

	mustExec(t, root2, "REVOKE SELECT ON sbtest.sbtest1 FROM granted@'%'")
	start = time.Now()
	user1 := node(0, "granted", "g")
	defer user1.Close()
	for {
		err := user1.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n)
		if me := sqlErr(err); me != nil && (me.Number == 1142 || me.Number == 1044) {
			break
		}
		if time.Since(start) > grantPropagationBound {
			t.Fatalf("a REVOKE on sql-2 not enforced on sql-1 after %s: %v", grantPropagationBound, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("REVOKE on sql-2 enforced on sql-1 after %s", time.Since(start).Round(time.Millisecond))
	mustExec(t, root1, "DROP USER granted@'%'")
}

func pdClient(t *testing.T, pg *testserver.Playground) *pdclient.Client {
	t.Helper()
	var addrs []string
	for _, p := range pg.Layout.PD {
		addrs = append(addrs, p.Client)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pdclient.New(ctx, addrs, pdclient.Options{RetryTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("PD client: %v", err)
	}
	return c
}

func regionCount(t *testing.T, pg *testserver.Playground) int {
	c := pdClient(t, pg)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := c.ScanRegions(ctx, nil, nil, 0)
	if err != nil {
		t.Logf("scan regions: %v", err)
		return 0
	}
	return len(rs)
}

// checkRegionsSpread waits (bounded) until PD knows at least minRegions
// regions, each with `replicas` voters and a leader, and every store holds
// peers and leads at least one region.
func checkRegionsSpread(t *testing.T, pg *testserver.Playground, minRegions, replicas int) {
	t.Helper()
	c := pdClient(t, pg)
	defer c.Close()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := c.ScanRegions(ctx, nil, nil, 0)
		cancel()
		if err == nil {
			peers, leaders := map[uint64]int{}, map[uint64]int{}
			ok := len(rs) >= minRegions
			for _, r := range rs {
				voters := 0
				for _, p := range r.Meta.GetPeers() {
					peers[p.GetStoreId()]++
					if p.GetRole() == 0 {
						voters++
					}
				}
				if voters < replicas || r.Leader == nil {
					ok = false
				} else {
					leaders[r.Leader.GetStoreId()]++
				}
			}
			if len(peers) < len(pg.Layout.Store) || len(leaders) < len(pg.Layout.Store) {
				ok = false
			}
			last = fmt.Sprintf("%d regions; peers per store %v; leaders per store %v", len(rs), peers, leaders)
			if ok {
				t.Logf("regions: %s", last)
				return
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("regions not spread after 90s (want >= %d regions, %d voters each, peers and leaders on all %d stores): %s",
				minRegions, replicas, len(pg.Layout.Store), last)
		}
		time.Sleep(time.Second)
	}
}

// longSnapshot is a transaction held open on one connection while GC runs.
type longSnapshot struct {
	conn  *sql.Conn
	tx    *sql.Tx
	c     string // sbtest1 id 1's c when it began
	began time.Time
}

func beginLongSnapshot(t *testing.T, db *sql.DB) *longSnapshot {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := &longSnapshot{conn: conn, began: time.Now()}
	if l.tx, err = conn.BeginTx(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.tx.QueryRow("SELECT c FROM sbtest1 WHERE id = 1").Scan(&l.c); err != nil {
		t.Fatal(err)
	}
	return l
}

// checkAndEnd reads the row again in the open transaction: the same value,
// though newer versions were written and GC ran meanwhile.
func (l *longSnapshot) checkAndEnd(t *testing.T) {
	t.Helper()
	var c string
	if err := l.tx.QueryRow("SELECT c FROM sbtest1 WHERE id = 1").Scan(&c); err != nil || c != l.c {
		t.Errorf("a transaction open during GC rounds read %q, %v; want its snapshot's %q", c, err, l.c)
	}
	_ = l.tx.Rollback()
	_ = l.conn.Close()
}

// waitGCRoundAfter waits until a SQL node reports a GC round that removed
// versions at a safe point later than since (so past the long snapshot,
// once it ended) and ended without an error, bounded by two minutes.
func waitGCRoundAfter(t *testing.T, pg *testserver.Playground, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last []string
	for {
		last = last[:0]
		for _, n := range pg.Layout.SQL {
			st, err := playground.Status(n.Status)
			if err != nil {
				last = append(last, err.Error())
				continue
			}
			gc, _ := st["gc"].(map[string]any)
			round, _ := gc["last_round"].(map[string]any)
			last = append(last, fmt.Sprintf("%s: %v", n.MySQL, gc))
			sp, _ := round["safe_point"].(float64)
			deleted, _ := round["writes_deleted"].(float64)
			if deleted > 0 && time.UnixMilli(int64(sp)>>18).After(since) && round["error"] == nil {
				t.Logf("GC round on %s: %v", n.MySQL, round)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no GC round past %s removed anything within 2 minutes: %q", since.Format(time.RFC3339), last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
