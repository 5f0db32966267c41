package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// queryStrings runs q and returns each row's columns joined by '|'.
func queryStrings(t *testing.T, c *sql.Conn, q string) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
			if !v.Valid {
				parts[i] = "NULL"
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func TestMemQuotaSortSpills(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := killConn(t, db)
	mustExec(t, c, "CREATE TABLE m (id INT PRIMARY KEY, k INT, s VARCHAR(64), d DECIMAL(10,3), dt DATE, tm TIME(2))")
	const n = 3000
	for i := 0; i < n; i += 500 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO m VALUES ")
		for j := i; j < i+500; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			// k repeats, so ties must keep scan order (a stable sort).
			fmt.Fprintf(&sb, "(%d, %d, 'row-%05d-%s', %d.5, '2020-01-%02d', '10:00:%02d.25')", j, (j*7919)%97, j, strings.Repeat("x", 20), j, j%28+1, j%60)
		}
		mustExec(t, c, sb.String())
	}
	queries := []string{
		"SELECT id, k, s, d, dt, tm FROM m ORDER BY k, d DESC",
		"SELECT id, k FROM m ORDER BY k DESC, id LIMIT 100, 50",
		"SELECT id, k, s FROM m ORDER BY k, s DESC LIMIT 10, 2500", // a top-N that spills
		"SELECT id, k, CONCAT(dt, ' ', tm, ' ', d) FROM m ORDER BY s DESC",
	}
	for _, q := range queries {
		mustExec(t, c, "SET tidb_mem_quota_query = DEFAULT")
		want := queryStrings(t, c, q)
		mustExec(t, c, "SET tidb_mem_quota_query = 65536") // a few hundred rows
		got := queryStrings(t, c, q)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows spilled, %d in memory", q, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: row %d spilled %q, in memory %q", q, i, got[i], want[i])
			}
		}
	}
	// Hash aggregation spills its rows by group-key partition: the same
	// groups come back (in another order, which GROUP BY does not fix).
	for _, q := range []string{
		"SELECT s, COUNT(*), SUM(d), MIN(dt), MAX(tm) FROM m GROUP BY s",
		"SELECT k, COUNT(*), SUM(d), GROUP_CONCAT(id ORDER BY id) FROM m GROUP BY k",
		"SELECT id DIV 2, COUNT(*), AVG(d) FROM m GROUP BY id DIV 2",
	} {
		mustExec(t, c, "SET tidb_mem_quota_query = DEFAULT")
		want := queryStrings(t, c, q)
		mustExec(t, c, "SET tidb_mem_quota_query = 262144") // some hundred groups
		got := queryStrings(t, c, q)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: spilled aggregation differs (%d groups, %d in memory)", q, len(got), len(want))
		}
	}
	// What cannot spill fails with 8175: an aggregation whose spilled
	// partition alone is over the quota.
	for _, q := range []string{
		// 3000 groups of ~1 KB: a partition holds ~45 KB.
		"SELECT s, COUNT(*), SUM(d), MIN(dt), MAX(tm) FROM m GROUP BY s",
	} {
		mustExec(t, c, "SET tidb_mem_quota_query = 36000")
		_, err := c.ExecContext(context.Background(), q)
		if mysqlErrNum(err) != 8175 || !strings.Contains(err.Error(), "tidb_mem_quota_query") {
			t.Fatalf("%s: %v, want 8175", q, err)
		}
	}
	// Within the quota they run.
	mustExec(t, c, "SET tidb_mem_quota_query = DEFAULT")
	if got := queryStrings(t, c, "SELECT COUNT(*) FROM m a JOIN m b ON a.s = b.s"); got[0] != fmt.Sprint(n) {
		t.Fatalf("join: %v", got)
	}
}
