package session

import (
	"context"
	"testing"
)

// BenchmarkCheckPrivileges measures the per-statement privilege check of a
// sysbench point select for root (global privileges) and for an account
// granted on the table only: the check must stay off the hot path.
func BenchmarkCheckPrivileges(b *testing.B) {
	be := newEmbeddedBackend(b)
	ctx := context.Background()
	root, err := be.NewSession(ctx, "root", "127.0.0.1", "test")
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{
		"CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))",
		"CREATE USER sb IDENTIFIED BY 'x'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON test.sbtest1 TO sb",
	} {
		if _, err := root.Execute(ctx, q); err != nil {
			b.Fatal(q, err)
		}
	}
	granted, err := be.NewSession(ctx, "sb", "127.0.0.1", "test")
	if err != nil {
		b.Fatal(err)
	}
	defer granted.Close()
	for _, bc := range []struct {
		name string
		s    *Session
		sql  string
	}{
		{"root/point_select", root.(*Session), "SELECT c FROM sbtest1 WHERE id=1"},
		{"table_grant/point_select", granted.(*Session), "SELECT c FROM sbtest1 WHERE id=1"},
		{"table_grant/update", granted.(*Session), "UPDATE sbtest1 SET k=k+1 WHERE id=1"},
		{"table_grant/range", granted.(*Session), "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c"},
	} {
		stmts, err := bc.s.parse(bc.sql)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.s.checkPrivileges(stmts[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
