package acceptance

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

const (
	sbTables    = 4
	sbTableSize = 10000
	sbThreads   = 8
	sbTime      = 3 // seconds per workload
	// Errors sysbench may count as "ignored" rather than abort on: deadlock,
	// lock wait timeout, and TiDB-style write conflicts. They must stay
	// under 1% of transactions.
	sbIgnoreErrors = "1213,1205,1020,9007,8028,8022"
)

var (
	readOnlyWorkloads  = map[string]bool{"oltp_point_select": true, "oltp_read_only": true, "select_random_points": true, "select_random_ranges": true}
	sysbenchWorkloads  = []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete", "select_random_points", "select_random_ranges"}
	reTransactions     = regexp.MustCompile(`(?m)^\s*transactions:\s+(\d+)`)
	reIgnoredErrors    = regexp.MustCompile(`(?m)^\s*ignored errors:\s+(\d+)`)
	reP95              = regexp.MustCompile(`(?m)^\s*95th percentile:\s+([\d.]+)`)
	rePerSec           = regexp.MustCompile(`(?m)^\s*transactions:\s+\d+\s+\(([\d.]+) per sec`)
	errCodesNotSupport = map[uint16]bool{1064: true, 1105: true, 1235: true}
)

type sbResult struct {
	Transactions, Ignored int
	TPS, P95              float64
}

func parseSysbench(out string) (sbResult, error) {
	var r sbResult
	m := reTransactions.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no 'transactions:' line in sysbench output")
	}
	r.Transactions, _ = strconv.Atoi(m[1])
	m = reIgnoredErrors.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no 'ignored errors:' line in sysbench output")
	}
	r.Ignored, _ = strconv.Atoi(m[1])
	if m := reP95.FindStringSubmatch(out); m != nil {
		r.P95, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := rePerSec.FindStringSubmatch(out); m != nil {
		r.TPS, _ = strconv.ParseFloat(m[1], 64)
	}
	return r, nil
}

func TestParseSysbench(t *testing.T) {
	out := `SQL statistics:
    queries performed:
        read:                            140000
    transactions:                        10000  (3331.12 per sec.)
    queries:                             140000 (46635.71 per sec.)
    ignored errors:                      12     (4.00 per sec.)
    reconnects:                          0      (0.00 per sec.)
Latency (ms):
         min:                                    0.61
         95th percentile:                        4.18
`
	r, err := parseSysbench(out)
	if err != nil || r.Transactions != 10000 || r.Ignored != 12 || r.P95 != 4.18 || r.TPS != 3331.12 {
		t.Fatalf("%+v %v", r, err)
	}
}

func sysbenchArgs(s *testserver.Server, db string) []string {
	return []string{"--db-driver=mysql", "--mysql-host=" + s.Host, "--mysql-port=" + strconv.Itoa(s.Port),
		"--mysql-user=root", "--mysql-password=", "--mysql-db=" + db}
}

// runSysbench runs one sysbench command with a hard time limit; any
// failure is fatal to the test.
func runSysbench(t *testing.T, bin string, limit time.Duration, args ...string) string {
	t.Helper()
	out, err := trySysbench(bin, limit, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// trySysbench runs one sysbench command with a hard time limit.
func trySysbench(bin string, limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	b, err := cmd.CombinedOutput()
	out := string(b)
	if ctx.Err() != nil {
		return out, fmt.Errorf("sysbench %s: timed out after %s\n%s", strings.Join(args, " "), limit, tail(out, 3000))
	}
	if err != nil {
		return out, fmt.Errorf("sysbench %s: %v\n%s", strings.Join(args, " "), err, tail(out, 3000))
	}
	return out, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// tableChecksum is a content fingerprint made of simple aggregates.
func tableChecksum(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cnt, sumK, sumC, sumPad, sumID sql.NullString
	err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(k), SUM(LENGTH(c)), SUM(LENGTH(pad)), SUM(id) FROM "+table).Scan(&cnt, &sumK, &sumC, &sumPad, &sumID)
	if err != nil {
		t.Fatalf("checksum %s: %v", table, err)
	}
	return fmt.Sprintf("count=%s sum(k)=%s sum(len(c))=%s sum(len(pad))=%s sum(id)=%s", cnt.String, sumK.String, sumC.String, sumPad.String, sumID.String)
}

func checksums(t *testing.T, db *sql.DB) []string {
	var out []string
	for i := 1; i <= sbTables; i++ {
		out = append(out, tableChecksum(t, db, fmt.Sprintf("sbtest%d", i)))
	}
	return out
}

// checkIndexes compares, for every table, a scan through the secondary index
// on k with a scan of the rows, and runs ADMIN CHECK TABLE when the server
// supports it.
var adminCheckLogged, explainLogged bool

// explain returns EXPLAIN's rows flattened to one line, or the error.
func explain(ctx context.Context, db *sql.DB, q string) string {
	rows, err := db.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if rows.Scan(ptrs...) != nil {
			break
		}
		var parts []string
		for _, v := range vals {
			if v.Valid && v.String != "" {
				parts = append(parts, v.String)
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return strings.Join(out, " | ")
}

func checkIndexes(t *testing.T, db *sql.DB, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 1; i <= sbTables; i++ {
		table := fmt.Sprintf("sbtest%d", i)
		var rowCnt, rowSum, idxCnt, idxSum sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(id) FROM "+table).Scan(&rowCnt, &rowSum); err != nil {
			t.Fatalf("after %s: row scan of %s: %v", after, table, err)
		}
		// sysbench names the secondary index of sbtestN k_N.
		idxQuery := fmt.Sprintf("SELECT COUNT(*), SUM(id) FROM %s FORCE INDEX (k_%d) WHERE k >= -2147483648", table, i)
		err := db.QueryRowContext(ctx, idxQuery).Scan(&idxCnt, &idxSum)
		if me := sqlErr(err); me != nil && errCodesNotSupport[me.Number] {
			t.Logf("FORCE INDEX not supported (%v); using the plain range query", err)
			idxQuery = "SELECT COUNT(*), SUM(id) FROM " + table + " WHERE k >= -2147483648"
			err = db.QueryRowContext(ctx, idxQuery).Scan(&idxCnt, &idxSum)
		}
		if err != nil {
			t.Fatalf("after %s: index scan of %s: %v", after, table, err)
		}
		if i == 1 && !explainLogged {
			explainLogged = true
			t.Logf("index check plan: %s", explain(ctx, db, idxQuery))
		}
		if rowCnt != idxCnt || rowSum != idxSum {
			t.Errorf("after %s: %s: index on k disagrees with rows: index count=%s sum(id)=%s, rows count=%s sum(id)=%s",
				after, table, idxCnt.String, idxSum.String, rowCnt.String, rowSum.String)
		}
		rows, err := db.QueryContext(ctx, "ADMIN CHECK TABLE "+table)
		if err == nil {
			rows.Close()
		} else if me := sqlErr(err); me != nil && errCodesNotSupport[me.Number] && target != "shoal" {
			// shoal supports ADMIN CHECK TABLE, so there any error fails;
			// other servers (MariaDB) do not have it.
			if !adminCheckLogged {
				adminCheckLogged = true
				t.Logf("ADMIN CHECK TABLE not supported by %s: %v", target, err)
			}
		} else {
			t.Errorf("after %s: ADMIN CHECK TABLE %s: %v", after, table, err)
		}
	}
}

func TestSysbench(t *testing.T) {
	bin := requireTool(t, "sysbench")
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE DATABASE sbtest")
	sdb, err := s.Open("sbtest")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()

	common := append(sysbenchArgs(s, "sbtest"), fmt.Sprintf("--tables=%d", sbTables), fmt.Sprintf("--table-size=%d", sbTableSize))
	start := time.Now()
	runSysbench(t, bin, 5*time.Minute, append([]string{"oltp_common"}, append(common, fmt.Sprintf("--threads=%d", sbTables), "prepare")...)...)
	t.Logf("prepare %d tables x %d rows: %s", sbTables, sbTableSize, time.Since(start).Round(time.Millisecond))
	checkIndexes(t, sdb, "prepare")

	for _, mode := range []string{"auto", "disable"} {
		for _, w := range sysbenchWorkloads {
			name := w + "/ps-mode=" + mode
			var before []string
			if readOnlyWorkloads[w] {
				before = checksums(t, sdb)
			}
			args := append([]string{w}, common...)
			args = append(args, fmt.Sprintf("--threads=%d", sbThreads), fmt.Sprintf("--time=%d", sbTime),
				"--db-ps-mode="+mode, "--mysql-ignore-errors="+sbIgnoreErrors, "--report-interval=0", "run")
			out, err := trySysbench(bin, time.Duration(sbTime)*time.Second+2*time.Minute, args...)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				if !s.Running() {
					t.Fatalf("the server died during %s", name)
				}
				continue
			}
			r, err := parseSysbench(out)
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, tail(out, 3000))
				continue
			}
			t.Logf("%-40s transactions=%d (%.1f tps) ignored-errors=%d p95=%.2fms", name, r.Transactions, r.TPS, r.Ignored, r.P95)
			if r.Transactions == 0 {
				t.Errorf("%s: no transactions\n%s", name, tail(out, 2000))
			}
			if float64(r.Ignored) > 0.01*float64(r.Transactions) {
				t.Errorf("%s: %d ignored errors > 1%% of %d transactions", name, r.Ignored, r.Transactions)
			}
			if readOnlyWorkloads[w] {
				after := checksums(t, sdb)
				for i := range before {
					if before[i] != after[i] {
						t.Errorf("%s (read-only) changed sbtest%d: before %s, after %s", name, i+1, before[i], after[i])
					}
				}
			} else {
				checkIndexes(t, sdb, name)
			}
		}
	}
	runSysbench(t, bin, 2*time.Minute, append([]string{"oltp_common"}, append(common, "cleanup")...)...)

	// bulk_insert: its own database, its own prepare/run/cleanup.
	mustExec(t, db, "CREATE DATABASE sbbulk")
	bulk := append(sysbenchArgs(s, "sbbulk"), fmt.Sprintf("--threads=%d", sbThreads))
	runSysbench(t, bin, 2*time.Minute, append([]string{"bulk_insert"}, append(bulk, "prepare")...)...)
	out := runSysbench(t, bin, time.Duration(sbTime)*time.Second+2*time.Minute,
		append([]string{"bulk_insert"}, append(bulk, fmt.Sprintf("--time=%d", sbTime), "--mysql-ignore-errors="+sbIgnoreErrors, "--report-interval=0", "run")...)...)
	r, err := parseSysbench(out)
	if err != nil {
		t.Fatalf("bulk_insert: %v\n%s", err, tail(out, 3000))
	}
	t.Logf("%-40s transactions=%d (%.1f tps) ignored-errors=%d", "bulk_insert", r.Transactions, r.TPS, r.Ignored)
	if r.Transactions == 0 || float64(r.Ignored) > 0.01*float64(r.Transactions) {
		t.Errorf("bulk_insert: transactions=%d ignored=%d", r.Transactions, r.Ignored)
	}
	bdb, err := s.Open("sbbulk")
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var n int
	if err := bdb.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n); err != nil || n == 0 {
		t.Errorf("bulk_insert left %d rows in sbbulk.sbtest1 (%v)", n, err)
	}
	runSysbench(t, bin, 2*time.Minute, append([]string{"bulk_insert"}, append(bulk, "cleanup")...)...)
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
