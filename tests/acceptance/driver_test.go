package acceptance

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// Expected values throughout are MySQL 8.0's (strict sql_mode, utf8mb4,
// time_zone '+00:00').

type rtKind int

const (
	rtText    rtKind = iota // compare the value's text exactly
	rtFloat32               // compare as float32
	rtFloat64               // compare as float64
	rtTime                  // DATE/DATETIME/TIMESTAMP: time.Time with parseTime=true
	rtBytes                 // compare bytes exactly (shown in hex on mismatch)
)

type rtVal struct {
	in   any    // parameter; nil inserts NULL
	want string // MySQL 8's value as text
}

type rtCase struct {
	typ    string // column type
	dbType string // go-sql-driver's DatabaseTypeName
	kind   rtKind
	vals   []rtVal
}

func driverTypeCases() []rtCase {
	rng := rand.New(rand.NewSource(42))
	blob := make([]byte, 65535)
	rng.Read(blob)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	text := strings.Repeat("日本語🐟a", 4000) // 56000 bytes, 20000 characters
	u := func(v uint64) any { return v }
	return []rtCase{
		{"TINYINT", "TINYINT", rtText, []rtVal{{int64(-128), "-128"}, {int64(127), "127"}, {int64(0), "0"}}},
		{"TINYINT UNSIGNED", "UNSIGNED TINYINT", rtText, []rtVal{{u(0), "0"}, {u(255), "255"}}},
		{"SMALLINT", "SMALLINT", rtText, []rtVal{{int64(-32768), "-32768"}, {int64(32767), "32767"}}},
		{"SMALLINT UNSIGNED", "UNSIGNED SMALLINT", rtText, []rtVal{{u(65535), "65535"}}},
		{"MEDIUMINT", "MEDIUMINT", rtText, []rtVal{{int64(-8388608), "-8388608"}, {int64(8388607), "8388607"}}},
		{"MEDIUMINT UNSIGNED", "UNSIGNED MEDIUMINT", rtText, []rtVal{{u(16777215), "16777215"}}},
		{"INT", "INT", rtText, []rtVal{{int64(math.MinInt32), "-2147483648"}, {int64(math.MaxInt32), "2147483647"}, {"-17", "-17"}}},
		{"INT UNSIGNED", "UNSIGNED INT", rtText, []rtVal{{u(math.MaxUint32), "4294967295"}}},
		{"BIGINT", "BIGINT", rtText, []rtVal{{int64(math.MinInt64), "-9223372036854775808"}, {int64(math.MaxInt64), "9223372036854775807"}}},
		{"BIGINT UNSIGNED", "UNSIGNED BIGINT", rtText, []rtVal{{u(math.MaxUint64), "18446744073709551615"}, {u(1 << 63), "9223372036854775808"}, {u(0), "0"}}},
		{"DECIMAL(10,2)", "DECIMAL", rtText, []rtVal{{"12345678.90", "12345678.90"}, {"-0.01", "-0.01"}, {"0", "0.00"},
			{"2.345", "2.35"}, {"-2.345", "-2.35"}, {float64(1.5), "1.50"}, {int64(-7), "-7.00"}, {"-99999999.99", "-99999999.99"}}},
		{"DECIMAL(65,30)", "DECIMAL", rtText, []rtVal{{"12345678901234567890123456789012345.123456789012345678901234567890", "12345678901234567890123456789012345.123456789012345678901234567890"},
			{"-0.000000000000000000000000000001", "-0.000000000000000000000000000001"}}},
		{"DECIMAL(20,0)", "DECIMAL", rtText, []rtVal{{"99999999999999999999", "99999999999999999999"}, {"-99999999999999999999", "-99999999999999999999"}}},
		// FLOAT as text has 6 significant digits; binary protocol rows carry the float32.
		{"FLOAT", "FLOAT", rtFloat32, []rtVal{{float32(3.14), "3.14"}, {float64(-1.5e-10), "-1.5e-10"}, {float64(1234567.89), "1234570"}, {int64(0), "0"}}},
		{"DOUBLE", "DOUBLE", rtFloat64, []rtVal{{float64(0.1), "0.1"}, {-math.MaxFloat64, "-1.7976931348623157e308"},
			{2.2250738585072014e-308, "2.2250738585072014e-308"}, {float64(-0.5), "-0.5"}, {"1e100", "1e100"}}},
		{"CHAR(10)", "CHAR", rtText, []rtVal{{"", ""}, {"ab  ", "ab"}, {"  lead", "  lead"}, {"日本語日本語日本語日", "日本語日本語日本語日"}, {"🐟é", "🐟é"}}},
		{"VARCHAR(100)", "VARCHAR", rtText, []rtVal{{"héllo wörld ✓ 日本語 🐟", "héllo wörld ✓ 日本語 🐟"}, {"", ""}, {"trailing  ", "trailing  "},
			{"it's \"q\" \\ back\\slash\n\ttab\x00nul\x1a%_", "it's \"q\" \\ back\\slash\n\ttab\x00nul\x1a%_"}}},
		{"TEXT", "TEXT", rtText, []rtVal{{text, text}, {"", ""}}},
		{"BINARY(8)", "BINARY", rtBytes, []rtVal{{[]byte{0, 1, 0xff}, "\x00\x01\xff\x00\x00\x00\x00\x00"}, {[]byte("\xff\xfe\x00\x80abcd"), "\xff\xfe\x00\x80abcd"}}},
		{"VARBINARY(300)", "VARBINARY", rtBytes, []rtVal{{all, string(all)}, {[]byte{}, ""}, {[]byte{0, 0}, "\x00\x00"}}},
		{"BLOB", "BLOB", rtBytes, []rtVal{{blob, string(blob)}, {[]byte("\x00'\"\\\n\r\x1a"), "\x00'\"\\\n\r\x1a"}}},
		{"DATE", "DATE", rtTime, []rtVal{{"2024-02-29", "2024-02-29"}, {"1000-01-01", "1000-01-01"}, {"9999-12-31", "9999-12-31"},
			{time.Date(2001, 2, 3, 0, 0, 0, 0, time.UTC), "2001-02-03"}}},
		{"DATETIME(6)", "DATETIME", rtTime, []rtVal{{"2024-02-29 13:45:56.123456", "2024-02-29 13:45:56.123456"}, {"1000-01-01 00:00:00", "1000-01-01 00:00:00.000000"},
			{"9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999"}, {"2024-01-01 00:00:00.1234567", "2024-01-01 00:00:00.123457"},
			{time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC), "2020-01-02 03:04:05.000006"}}},
		{"DATETIME", "DATETIME", rtTime, []rtVal{{"2024-02-29 13:45:56", "2024-02-29 13:45:56"}, {"2024-02-29 23:59:59.5", "2024-03-01 00:00:00"}}},
		{"TIMESTAMP", "TIMESTAMP", rtTime, []rtVal{{"1970-01-01 00:00:01", "1970-01-01 00:00:01"}, {"2038-01-19 03:14:07", "2038-01-19 03:14:07"},
			{"2024-02-29 13:45:56.5", "2024-02-29 13:45:57"}, {time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC), "2024-07-01 12:00:00"}}},
		{"TIMESTAMP(3)", "TIMESTAMP", rtTime, []rtVal{{"2024-02-29 13:45:56.1239", "2024-02-29 13:45:56.124"}, {"2000-01-01 00:00:00", "2000-01-01 00:00:00.000"}}},
		{"TIME", "TIME", rtText, []rtVal{{"12:34:56", "12:34:56"}, {"-838:59:59", "-838:59:59"}, {"838:59:59", "838:59:59"}, {"00:00:00", "00:00:00"}, {"-00:00:01", "-00:00:01"}}},
		{"TIME(3)", "TIME", rtText, []rtVal{{"-12:34:56.789", "-12:34:56.789"}, {"100:00:00.5", "100:00:00.500"}}},
	}
}

// driverDB opens a pool on s with the given driver options.
func driverDB(t *testing.T, s *testserver.Server, db string, interpolate, parseTime bool) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	cfg.InterpolateParams = interpolate
	cfg.ParseTime = parseTime
	cfg.Loc = time.UTC
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	pool, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// rtCompare compares a value scanned into *any with the expected text.
func rtCompare(c rtCase, in any, got any, want string, parseTime bool) error {
	show := func(v any) string {
		if b, ok := v.([]byte); ok {
			if c.kind == rtBytes || len(b) > 80 {
				if len(b) > 40 {
					return fmt.Sprintf("[]byte len %d %x...", len(b), b[:40])
				}
				return fmt.Sprintf("[]byte %x", b)
			}
			return fmt.Sprintf("[]byte %q", b)
		}
		return fmt.Sprintf("%T %v", v, v)
	}
	bad := func() error {
		w := want
		if c.kind == rtBytes || len(w) > 80 {
			if len(w) > 40 {
				w = fmt.Sprintf("len %d %x...", len(w), w[:40])
			} else {
				w = fmt.Sprintf("%x", w)
			}
		}
		return fmt.Errorf("got %s, want %s", show(got), w)
	}
	switch c.kind {
	case rtFloat32, rtFloat64:
		bits := 64
		if c.kind == rtFloat32 {
			bits = 32
		}
		wf, _ := strconv.ParseFloat(want, bits)
		var gf float64
		switch v := got.(type) {
		case []byte:
			if c.kind == rtFloat32 {
				if string(v) != want {
					return bad()
				}
				return nil
			}
			f, err := strconv.ParseFloat(string(v), bits)
			if err != nil {
				return bad()
			}
			gf = f
		case float32:
			// The stored float32 itself (binary rows): the parameter rounded
			// to float32; a text row's printed value otherwise (in is nil).
			switch x := in.(type) {
			case float32:
				wf = float64(x)
			case float64:
				wf = float64(float32(x))
			}
			gf = float64(v)
		case float64:
			gf = v
		default:
			return bad()
		}
		if c.kind == rtFloat32 && float32(gf) != float32(wf) || c.kind == rtFloat64 && gf != wf {
			return bad()
		}
		return nil
	case rtTime:
		if parseTime {
			tv, ok := got.(time.Time)
			if !ok {
				return bad()
			}
			layout := "2006-01-02 15:04:05.999999"
			if len(want) == 10 {
				layout = "2006-01-02"
			}
			wt, err := time.ParseInLocation(layout, want, time.UTC)
			if err != nil {
				return err
			}
			if !tv.Equal(wt) || tv.Location() != time.UTC {
				return fmt.Errorf("got %s, want %s", tv.Format(time.RFC3339Nano), wt.Format(time.RFC3339Nano))
			}
			return nil
		}
	}
	var s string
	switch v := got.(type) {
	case []byte:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	default:
		return bad()
	}
	if s != want {
		return bad()
	}
	return nil
}

func TestGoDriver(t *testing.T) {
	s := startServer(t)
	admin := driverDB(t, s, "", false, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	exec := func(db *sql.DB, q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(admin, "CREATE DATABASE godriver CHARACTER SET utf8mb4")
	cases := driverTypeCases()

	for _, mode := range []struct{ interpolate, parseTime bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		name := fmt.Sprintf("interpolateParams=%v,parseTime=%v", mode.interpolate, mode.parseTime)
		t.Run(name, func(t *testing.T) {
			db := driverDB(t, s, "godriver", mode.interpolate, mode.parseTime)
			db.SetMaxOpenConns(4)
			for i, c := range cases {
				table := fmt.Sprintf("rt_%d_%v_%v", i, mode.interpolate, mode.parseTime)
				if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s NULL)", table, c.typ)); err != nil {
					t.Errorf("%s: CREATE TABLE: %v", c.typ, err)
					continue
				}
				ins, err := db.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (id, v) VALUES (?, ?)", table))
				if err != nil {
					t.Errorf("%s: prepare insert: %v", c.typ, err)
					continue
				}
				vals := append(append([]rtVal{}, c.vals...), rtVal{nil, ""}) // and NULL
				inserted := map[int]bool{}
				for j, v := range vals {
					if _, err := ins.ExecContext(ctx, j+1, v.in); err != nil {
						t.Errorf("%s: insert %s: %v", c.typ, short(v.in), err)
						continue
					}
					inserted[j+1] = true
				}
				ins.Close()

				check := func(how string, id int, got any, ct *sql.ColumnType) {
					t.Helper()
					v := vals[id-1]
					if ct != nil && ct.DatabaseTypeName() != c.dbType {
						t.Errorf("%s %s: column type %q, want %q", c.typ, how, ct.DatabaseTypeName(), c.dbType)
					}
					if v.in == nil {
						if got != nil {
							t.Errorf("%s %s: NULL came back as %T %v", c.typ, how, got, got)
						}
						return
					}
					if got == nil {
						t.Errorf("%s %s: %s came back as NULL", c.typ, how, short(v.in))
						return
					}
					in := v.in
					if how == "text protocol" {
						// A text row carries the printed value (FLOAT: 6
						// significant digits), which the driver may parse
						// into a float32: compare with what was printed.
						in = nil
					}
					if err := rtCompare(c, in, got, v.want, mode.parseTime); err != nil {
						t.Errorf("%s %s: inserted %s: %v", c.typ, how, short(v.in), err)
					}
				}

				// Text protocol (COM_QUERY, no arguments).
				rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT id, v FROM %s ORDER BY id", table))
				if err != nil {
					t.Errorf("%s: select: %v", c.typ, err)
					continue
				}
				cts, _ := rows.ColumnTypes()
				n := 0
				for rows.Next() {
					var id int
					var got any
					if err := rows.Scan(&id, &got); err != nil {
						t.Errorf("%s: scan: %v", c.typ, err)
						break
					}
					n++
					var ct *sql.ColumnType
					if n == 1 && len(cts) == 2 {
						ct = cts[1]
					}
					if id >= 1 && id <= len(vals) {
						check("text protocol", id, got, ct)
					}
				}
				if err := rows.Err(); err != nil {
					t.Errorf("%s: rows: %v", c.typ, err)
				}
				rows.Close()
				if n != len(inserted) {
					t.Errorf("%s: %d rows back, %d inserted", c.typ, n, len(inserted))
				}

				// With an argument: the binary protocol (server-side prepared
				// statement) unless interpolateParams.
				sel, err := db.PrepareContext(ctx, fmt.Sprintf("SELECT v FROM %s WHERE id = ?", table))
				if err != nil {
					t.Errorf("%s: prepare select: %v", c.typ, err)
					continue
				}
				for id := range inserted {
					rows, err := sel.QueryContext(ctx, id)
					if err != nil {
						t.Errorf("%s: select id %d: %v", c.typ, id, err)
						continue
					}
					cts, _ := rows.ColumnTypes()
					if !rows.Next() {
						t.Errorf("%s: id %d not found (%v)", c.typ, id, rows.Err())
						rows.Close()
						continue
					}
					var got any
					if err := rows.Scan(&got); err != nil {
						t.Errorf("%s: scan id %d: %v", c.typ, id, err)
					} else {
						var ct *sql.ColumnType
						if len(cts) == 1 {
							ct = cts[0]
						}
						check("prepared select", id, got, ct)
					}
					rows.Close()
				}
				sel.Close()
			}
			driverTypedScan(t, ctx, db, mode.parseTime)
			driverErrors(t, ctx, db, mode.interpolate)
		})
	}

	t.Run("prepared", func(t *testing.T) {
		for _, interpolate := range []bool{false, true} {
			db := driverDB(t, s, "godriver", interpolate, false)
			table := fmt.Sprintf("ai_%v", interpolate)
			exec(db, fmt.Sprintf("CREATE TABLE %s (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), n INT)", table))
			res, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (v, n) VALUES (?, ?)", table), "a", 1)
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := res.LastInsertId(); id != 1 {
				t.Errorf("interpolate=%v: LastInsertId = %d, want 1", interpolate, id)
			}
			res, err = db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (v, n) VALUES (?, ?), (?, ?)", table), "b", 2, "c", 2)
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := res.LastInsertId(); id != 2 {
				t.Errorf("interpolate=%v: multi-row LastInsertId = %d, want 2 (the first row's)", interpolate, id)
			}
			if n, _ := res.RowsAffected(); n != 2 {
				t.Errorf("interpolate=%v: multi-row RowsAffected = %d, want 2", interpolate, n)
			}
			// Changed rows, not matched rows (CLIENT_FOUND_ROWS off).
			res, err = db.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET v = ? WHERE n = ?", table), "b", 2)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("interpolate=%v: UPDATE matching 2 rows, changing 1: RowsAffected = %d, want 1", interpolate, n)
			}
			// One statement, many executions, many parameter types.
			st, err := db.PrepareContext(ctx, "SELECT ? + 1, CONCAT(?, '-x'), ? IS NULL, CHAR_LENGTH(?)")
			if err != nil {
				t.Fatal(err)
			}
			for i, args := range [][]any{{int64(41), "a", nil, "🐟🐟"}, {1.5, "日本", 0, ""}, {"7", []byte("b"), "x", "abc"}} {
				var sum, cat string
				var isNull, clen int
				if err := st.QueryRowContext(ctx, args...).Scan(&sum, &cat, &isNull, &clen); err != nil {
					t.Errorf("interpolate=%v: prepared select %d: %v", interpolate, i, err)
					continue
				}
				want := [][]any{{"42", "a-x", 1, 2}, {"2.5", "日本-x", 0, 0}, {"8", "b-x", 0, 3}}[i]
				if sum != want[0] || cat != want[1] || isNull != want[2] || clen != want[3] {
					t.Errorf("interpolate=%v: prepared select %d: got %q %q %d %d, want %v", interpolate, i, sum, cat, isNull, clen, want)
				}
			}
			st.Close()
			var count int
			if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE v IN (?, ?) AND n > ?", table), "a", "b", 0).Scan(&count); err != nil || count != 3 {
				t.Errorf("interpolate=%v: count = %d, %v; want 3", interpolate, count, err)
			}
		}
	})

	t.Run("transactions", func(t *testing.T) {
		for _, interpolate := range []bool{false, true} {
			db := driverDB(t, s, "godriver", interpolate, false)
			other := driverDB(t, s, "godriver", false, false)
			table := fmt.Sprintf("tx_%v", interpolate)
			exec(db, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(10))", table))
			count := func(db interface {
				QueryRowContext(context.Context, string, ...any) *sql.Row
			}) int {
				t.Helper()
				var n int
				if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
					t.Fatalf("count: %v", err)
				}
				return n
			}
			// Commit.
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES (?, ?)", 1, "one"); err != nil {
				t.Fatal(err)
			}
			st, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" VALUES (?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []int{2, 3} {
				if _, err := st.ExecContext(ctx, id, strconv.Itoa(id)); err != nil {
					t.Fatal(err)
				}
			}
			if n := count(tx); n != 3 {
				t.Errorf("interpolate=%v: inside the transaction: %d rows, want 3", interpolate, n)
			}
			if n := count(other); n != 0 {
				t.Errorf("interpolate=%v: another connection sees %d uncommitted rows", interpolate, n)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit: %v", err)
			}
			if n := count(other); n != 3 {
				t.Errorf("interpolate=%v: after commit another connection sees %d rows, want 3", interpolate, n)
			}
			// An isolation level for one transaction: the driver sends SET
			// TRANSACTION ISOLATION LEVEL REPEATABLE READ before BEGIN.
			tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
			if err != nil {
				t.Errorf("interpolate=%v: BeginTx(REPEATABLE READ): %v", interpolate, err)
			} else {
				if n := count(tx); n != 3 {
					t.Errorf("interpolate=%v: REPEATABLE READ transaction sees %d rows, want 3", interpolate, n)
				}
				if err := tx.Commit(); err != nil {
					t.Errorf("interpolate=%v: commit REPEATABLE READ transaction: %v", interpolate, err)
				}
			}
			// Rollback.
			tx, err = db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES (?, ?)", 4, "four"); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET v = ? WHERE id = ?", "changed", 1); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE id = ?", 2); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatalf("rollback: %v", err)
			}
			var vals []string
			rows, err := db.QueryContext(ctx, "SELECT CONCAT(id, '=', v) FROM "+table+" ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v string
				rows.Scan(&v)
				vals = append(vals, v)
			}
			rows.Close()
			if got := strings.Join(vals, ","); got != "1=one,2=2,3=3" {
				t.Errorf("interpolate=%v: after rollback: %s, want 1=one,2=2,3=3", interpolate, got)
			}
			// A read-only transaction reads and refuses writes (1792).
			tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only begin: %v", err)
			}
			if n := count(tx); n != 3 {
				t.Errorf("interpolate=%v: read-only transaction sees %d rows, want 3", interpolate, n)
			}
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES (?, ?)", 9, "nine")
			if e := sqlErr(err); e == nil || e.Number != 1792 {
				t.Errorf("interpolate=%v: write in a READ ONLY transaction: %v, want error 1792", interpolate, err)
			}
			tx.Rollback()
			if n := count(db); n != 3 {
				t.Errorf("interpolate=%v: after the READ ONLY transaction: %d rows, want 3", interpolate, n)
			}
		}
	})
}

// driverTypedScan scans one row into typed Go destinations, as applications do.
func driverTypedScan(t *testing.T, ctx context.Context, db *sql.DB, parseTime bool) {
	t.Helper()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS typed (id INT PRIMARY KEY, a TINYINT, b TINYINT UNSIGNED, c SMALLINT, d INT UNSIGNED,
		e BIGINT, f BIGINT UNSIGNED, g FLOAT, h DOUBLE, i DECIMAL(10,3), j VARCHAR(20), k VARBINARY(20), l DATETIME(6), m DATE, n INT)`); err != nil {
		t.Errorf("typed: create: %v", err)
		return
	}
	db.ExecContext(ctx, "DELETE FROM typed")
	if _, err := db.ExecContext(ctx, "INSERT INTO typed VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
		int8(-5), uint8(200), int16(-300), uint32(4000000000), int64(-1), uint64(math.MaxUint64), float32(0.25), 1e-5, "-1234.5",
		"žluťoučký 🐟", []byte{0, 0xff}, time.Date(2024, 2, 29, 1, 2, 3, 456789000, time.UTC), "2024-02-29"); err != nil {
		t.Errorf("typed: insert: %v", err)
		return
	}
	for _, q := range []struct {
		name string
		args []any
	}{{"text", nil}, {"prepared", []any{1}}} {
		query := "SELECT a, b, c, d, e, f, g, h, i, j, k, l, m, n FROM typed"
		if q.args != nil {
			query += " WHERE id = ?"
		}
		var (
			a int8
			b uint8
			c int16
			d uint32
			e int64
			f uint64
			g float32
			h float64
			i string
			j string
			k []byte
			m sql.NullString
			n sql.NullInt64
		)
		var l any
		var lt time.Time
		var ls string
		if parseTime {
			l = &lt
		} else {
			l = &ls
		}
		err := db.QueryRowContext(ctx, query, q.args...).Scan(&a, &b, &c, &d, &e, &f, &g, &h, &i, &j, &k, l, &m, &n)
		if err != nil {
			t.Errorf("typed %s: scan: %v", q.name, err)
			continue
		}
		got := fmt.Sprintf("%d %d %d %d %d %d %v %v %s %s %x %v %v", a, b, c, d, e, f, g, h, i, j, k, m.Valid, n.Valid)
		want := fmt.Sprintf("-5 200 -300 4000000000 -1 %d 0.25 1e-05 -1234.500 žluťoučký 🐟 00ff true false", uint64(math.MaxUint64))
		if got != want {
			t.Errorf("typed %s: got %q, want %q", q.name, got, want)
		}
		if parseTime {
			if !lt.Equal(time.Date(2024, 2, 29, 1, 2, 3, 456789000, time.UTC)) {
				t.Errorf("typed %s: DATETIME(6) = %s", q.name, lt)
			}
			if m.String[:10] != "2024-02-29" {
				t.Errorf("typed %s: DATE into NullString = %q", q.name, m.String)
			}
		} else {
			if ls != "2024-02-29 01:02:03.456789" {
				t.Errorf("typed %s: DATETIME(6) = %q", q.name, ls)
			}
			if m.String != "2024-02-29" {
				t.Errorf("typed %s: DATE = %q", q.name, m.String)
			}
		}
	}
}

// driverErrors checks strict-mode errors through parameters.
func driverErrors(t *testing.T, ctx context.Context, db *sql.DB, interpolate bool) {
	t.Helper()
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS errs (id INT PRIMARY KEY, a TINYINT, b INT UNSIGNED, c VARCHAR(3), d DECIMAL(4,2), e DATE)"); err != nil {
		t.Errorf("errs: create: %v", err)
		return
	}
	db.ExecContext(ctx, "DELETE FROM errs")
	if _, err := db.ExecContext(ctx, "INSERT INTO errs (id) VALUES (?)", 1); err != nil {
		t.Errorf("errs: insert: %v", err)
		return
	}
	for _, c := range []struct {
		col  string
		val  any
		code uint16
	}{
		{"id", 1, 1062}, {"a", 128, 1264}, {"a", -129, 1264}, {"b", -1, 1264}, {"c", "abcd", 1406}, {"c", "🐟🐟🐟🐟", 1406},
		{"d", "100", 1264}, {"e", "2023-02-29", 1292}, {"a", "x", 1366},
	} {
		var err error
		if c.col == "id" {
			_, err = db.ExecContext(ctx, "INSERT INTO errs (id) VALUES (?)", c.val)
		} else {
			_, err = db.ExecContext(ctx, fmt.Sprintf("INSERT INTO errs (id, %s) VALUES (?, ?)", c.col), 2, c.val)
		}
		if e := sqlErr(err); e == nil || e.Number != c.code {
			t.Errorf("interpolate=%v: %s = %v: got %v, want error %d", interpolate, c.col, c.val, err, c.code)
		}
		db.ExecContext(ctx, "DELETE FROM errs WHERE id = 2")
	}
}

func short(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		if len(x) > 16 {
			return fmt.Sprintf("[]byte(len %d)", len(x))
		}
		return fmt.Sprintf("[]byte(%x)", x)
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("string(len %d)", len(x))
		}
		return strconv.Quote(x)
	case time.Time:
		return "time " + x.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// TestPyMySQL runs testdata/pymysql_roundtrip.py (PyMySQL, the pure-Python
// driver) against the server.
func TestPyMySQL(t *testing.T) {
	py := requireTool(t, "python3")
	if out, err := exec.Command(py, "-c", "import pymysql").CombinedOutput(); err != nil {
		if testserver.InCI() {
			t.Fatalf("PyMySQL is required in CI but not importable (scripts/test.sh installs it): %s", out)
		}
		t.Skipf("PyMySQL not installed (python3 -m pip install pymysql): %s", bytes.TrimSpace(out))
	}
	s := startServer(t)
	script, err := filepath.Abs(filepath.Join("testdata", "pymysql_roundtrip.py"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, script, "--host", s.Host, "--port", strconv.Itoa(s.Port))
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8")
	out, err := cmd.CombinedOutput()
	t.Logf("pymysql_roundtrip.py output:\n%s", out)
	if err != nil {
		t.Fatalf("pymysql_roundtrip.py: %v", err)
	}
	if !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("pymysql_roundtrip.py did not report ALL OK")
	}
}
