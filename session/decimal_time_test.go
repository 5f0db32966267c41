package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

func TestDecimalTimeEndToEnd(t *testing.T) {
	store, err := embedded.Open(t.TempDir(), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := b.NewSession(ctx, "root", "localhost", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows := func(sql string) string {
		t.Helper()
		rss, err := s.Execute(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out []string
		for _, rs := range rss {
			if rs == nil {
				continue
			}
			var batch []types.Row
			for {
				if err := rs.Next(ctx, &batch); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				if len(batch) == 0 {
					break
				}
				for _, r := range batch {
					var cells []string
					for _, d := range r {
						cells = append(cells, d.String())
					}
					out = append(out, strings.Join(cells, ","))
				}
			}
			rs.Close()
		}
		return strings.Join(out, ";")
	}
	expect := func(sql, want string) {
		t.Helper()
		if got := rows(sql); got != want {
			t.Errorf("%s:\n got %q\nwant %q", sql, got, want)
		}
	}
	fails := func(sql, code string) {
		t.Helper()
		_, err := s.Execute(ctx, sql)
		if err == nil || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: err %v, want %s", sql, err, code)
		}
	}
	rows("CREATE TABLE acct (id INT PRIMARY KEY, bal DECIMAL(12,2) NOT NULL, rate DECIMAL(4,4), ts DATETIME, d DATE, tm TIME, KEY (bal), KEY (ts))")
	rows("INSERT INTO acct VALUES (1, 10.005, 0.1234, '2024-01-02 03:04:05', '2024-01-02', '10:11:12'), (2, 0.1, 0.5, '2024-01-03', 20240104, '-01:00:00'), (3, -5.5, 0, 20240105060708, '24-01-05', '1 00:00:01')")
	expect("SELECT id, bal, rate, ts, d, tm FROM acct ORDER BY id",
		"1,10.01,0.1234,2024-01-02 03:04:05,2024-01-02,10:11:12;2,0.10,0.5000,2024-01-03 00:00:00,2024-01-04,-01:00:00;3,-5.50,0.0000,2024-01-05 06:07:08,2024-01-05,24:00:01")
	expect("SELECT SUM(bal), AVG(bal), SUM(bal) = 4.61, MAX(bal), MIN(ts) FROM acct", "4.61,1.536667,1,10.01,2024-01-02 03:04:05")
	expect("SELECT bal + 0.1 + 0.2, bal * 3, bal / 3, 1 / 3, -bal, ABS(bal), ROUND(bal, 1), TRUNCATE(bal, 1), FLOOR(bal), CEIL(bal) FROM acct WHERE id = 3",
		"-5.20,-16.50,-1.833333,0.3333,5.50,5.50,-5.5,-5.5,-6,-5")
	expect("SELECT 0.1 + 0.2 = 0.3, 1.50 = 1.5, 2 = 2.0, 10 DIV 3, 10.5 % 3, CAST(1.005 AS DECIMAL(5,2)), CAST('3.14159' AS DECIMAL(10,3))", "1,1,1,3,1.5,1.01,3.142")
	// Index lookups on DECIMAL and DATETIME columns.
	expect("SELECT id FROM acct WHERE bal = 0.10", "2")
	expect("SELECT id FROM acct WHERE bal = '10.01'", "1")
	expect("SELECT id FROM acct WHERE bal > 0 ORDER BY bal", "2;1")
	expect("SELECT id FROM acct WHERE ts = '2024-01-03'", "2")
	expect("SELECT id FROM acct WHERE ts >= '2024-01-03 00:00:00' ORDER BY ts", "2;3")
	expect("SELECT id FROM acct WHERE d = 20240105", "3")
	expect("SELECT bal FROM acct WHERE bal = 10.01", "10.01")
	// Strict mode errors.
	fails("INSERT INTO acct (id, bal) VALUES (9, 12345678901.00)", "1264")
	fails("INSERT INTO acct (id, bal) VALUES (9, 'abc')", "1366")
	fails("INSERT INTO acct (id, bal, ts) VALUES (9, 1, '2024-02-30 00:00:00')", "1292")
	fails("INSERT INTO acct (id, bal, d) VALUES (9, 1, '0000-00-00')", "1292")
	// TPC-C style update with a decimal parameter.
	info, err := s.Prepare(ctx, "UPDATE acct SET bal = bal + ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := types.ParseDecimal("1234.56")
	for range 3 {
		if _, err := s.ExecutePrepared(ctx, info.ID, []types.Datum{p, types.NewInt(2)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ExecutePrepared(ctx, info.ID, []types.Datum{types.NewFloat(0.07), types.NewInt(2)}); err != nil {
		t.Fatal(err)
	}
	expect("SELECT bal FROM acct WHERE id = 2", "3703.85")
	expect("SELECT COUNT(*) FROM acct WHERE bal <> (SELECT SUM(bal) FROM acct a2 WHERE a2.id = acct.id)", "0")
	// Date/time functions.
	expect("SELECT DATE_ADD('2024-01-31', INTERVAL 1 MONTH), DATE_SUB(ts, INTERVAL 1 DAY), ts + INTERVAL 90 MINUTE, DATEDIFF('2024-03-01', d), TIMESTAMPDIFF(HOUR, d, ts) FROM acct WHERE id = 1",
		"2024-02-29,2024-01-01 03:04:05,2024-01-02 04:34:05,59,3")
	expect("SELECT YEAR(ts), MONTH(ts), DAY(ts), HOUR(ts), MINUTE(ts), SECOND(ts), DATE(ts), TIME(ts), DATE_FORMAT(ts, '%Y/%m/%d %H.%i.%s %W') FROM acct WHERE id = 1",
		"2024,1,2,3,4,5,2024-01-02,03:04:05,2024/01/02 03.04.05 Tuesday")
	expect("SELECT STR_TO_DATE('01/02/2024 13:14:15', '%m/%d/%Y %H:%i:%s'), STR_TO_DATE('2024-01-02', '%Y-%m-%d'), FROM_UNIXTIME(0) = FROM_UNIXTIME(UNIX_TIMESTAMP('1970-01-01 00:00:00')), CAST('2024-01-02 03:04:05' AS DATE), CAST(20240102 AS DATETIME), CAST('10:00' AS TIME)",
		"2024-01-02 13:14:15,2024-01-02,1,2024-01-02,2024-01-02 00:00:00,10:00:00")
	rows("CREATE TABLE ev (id INT PRIMARY KEY, at DATETIME DEFAULT CURRENT_TIMESTAMP, n INT)")
	rows("INSERT INTO ev (id, n) VALUES (1, 1)")
	expect("SELECT at IS NOT NULL, at <= NOW(), TIMESTAMPDIFF(MINUTE, at, NOW()) < 5 FROM ev", "1,1,1")
}
