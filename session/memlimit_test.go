package session_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestServerMemoryLimitVariable: tidb_server_memory_limit is GLOBAL and
// takes bytes (with a unit), a percentage of the machine's memory, or 0.
func TestServerMemoryLimitVariable(t *testing.T) {
	dsn, _ := startSpillServer(t, t.TempDir())
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := killConn(t, db)
	if got := queryStrings(t, c, "SELECT @@global.tidb_server_memory_limit"); got[0] != "0" {
		t.Fatalf("default %v, want 0", got)
	}
	for val, want := range map[string]string{
		"'80%'": "80%", "'2GB'": "2147483648", "'64mb'": "67108864", "1048576": "1048576", "0": "0",
	} {
		mustExec(t, c, "SET GLOBAL tidb_server_memory_limit = "+val)
		if got := queryStrings(t, c, "SELECT @@global.tidb_server_memory_limit"); got[0] != want {
			t.Fatalf("set %s: reads %v, want %s", val, got, want)
		}
	}
	for _, val := range []string{"'abc'", "'150%'", "'0%'", "'-5'", "'1PB'", "'12.5'"} {
		_, err := c.ExecContext(context.Background(), "SET GLOBAL tidb_server_memory_limit = "+val)
		if mysqlErrNum(err) != 1231 {
			t.Fatalf("set %s: %v, want 1231", val, err)
		}
	}
	mustExec(t, c, "SET GLOBAL tidb_server_memory_limit = '1GB'")
	mustExec(t, c, "SET GLOBAL tidb_server_memory_limit = DEFAULT")
	if got := queryStrings(t, c, "SELECT @@global.tidb_server_memory_limit"); got[0] != "0" {
		t.Fatalf("after DEFAULT: %v, want 0", got)
	}
	_, err = c.ExecContext(context.Background(), "SET SESSION tidb_server_memory_limit = 0")
	if mysqlErrNum(err) != 1229 {
		t.Fatalf("SET SESSION: %v, want 1229", err)
	}
}

// TestServerMemoryLimit: under a small tidb_server_memory_limit two
// connections' concurrent sorts and aggregations spill when their growth
// crosses it and give the rows they give without it; what cannot spill (a
// nested-loop join's inner side) fails with 8176. The node's count is back
// to 0 after.
func TestServerMemoryLimit(t *testing.T) {
	tmp := t.TempDir()
	dsn, b := startSpillServer(t, tmp)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := killConn(t, db)
	fillJoinTables(t, c)
	queries := []string{
		"SELECT id, s, d, dt FROM m ORDER BY s DESC",
		"SELECT nk, COUNT(*), SUM(d), MAX(s) FROM m GROUP BY nk",
		"SELECT id, s FROM m ORDER BY dt, id LIMIT 10, 2000",
	}
	want := make([][]string, len(queries))
	for i, q := range queries {
		want[i] = queryStrings(t, c, q)
	}
	// Each query holds ~1 MB unspilled; tidb_mem_quota_query stays 1 GiB.
	mustExec(t, c, "SET GLOBAL tidb_server_memory_limit = 262144")
	conns := []*sql.Conn{c, killConn(t, db)}
	var wg sync.WaitGroup
	errs := make(chan string, 2*3*len(queries))
	for _, cc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				for i, q := range queries {
					rows, err := queryRows(cc, q)
					if err != nil {
						errs <- q + ": " + err.Error()
						continue
					}
					w := want[i]
					if strings.Contains(q, "GROUP BY") {
						w = slices.Sorted(slices.Values(w))
						slices.Sort(rows)
					}
					if !slices.Equal(rows, w) {
						errs <- q + ": rows differ under the server limit"
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	_, err = c.ExecContext(context.Background(), "SELECT COUNT(*) FROM m a JOIN n b ON a.id < b.id")
	if mysqlErrNum(err) != 8176 || !strings.Contains(err.Error(), "tidb_server_memory_limit") {
		t.Fatalf("nested loop over the server limit: %v, want 8176", err)
	}
	if used := b.ServerMemoryUsed(); used != 0 {
		t.Fatalf("node still counts %d bytes after the statements", used)
	}
	mustExec(t, c, "SET GLOBAL tidb_server_memory_limit = 0")
}

// queryRows is queryStrings returning the error (for goroutines).
func queryRows(c *sql.Conn, q string) ([]string, error) {
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return nil, err
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
			return nil, err
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
	return out, rows.Err()
}
