package session

import (
	"context"
	"errors"
	"testing"

	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// TestPreparedPrivilegeVerdict: a prepared statement's remembered
// privilege check holds only while the grants, the active roles, the
// current database and the schema are those it passed under.
func TestPreparedPrivilegeVerdict(t *testing.T) {
	be := newEmbeddedBackend(t)
	ctx := context.Background()
	root, err := be.NewSession(ctx, "root", "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	run := func(q string) {
		t.Helper()
		if _, err := root.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run("CREATE DATABASE other")
	run("CREATE TABLE test.t (id INT PRIMARY KEY, c INT)")
	run("CREATE TABLE other.t (id INT PRIMARY KEY, c INT)")
	run("INSERT INTO test.t VALUES (1, 10)")
	run("CREATE USER u IDENTIFIED BY 'x'")
	run("CREATE ROLE reader")
	run("GRANT SELECT ON test.t TO u")
	run("GRANT INSERT ON other.t TO reader")
	run("GRANT reader TO u")

	c, err := be.NewSession(ctx, "u", "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ps, err := c.Prepare(ctx, "SELECT c FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	execID := func(id uint32, want int) {
		t.Helper()
		rs, err := c.ExecutePrepared(ctx, id, []types.Datum{types.NewInt(1)})
		if rs != nil {
			rs.Close()
		}
		var se *errno.SQLError
		switch {
		case want == 0 && err != nil:
			t.Fatalf("got %v, want success", err)
		case want != 0 && (!errors.As(err, &se) || int(se.Code) != want):
			t.Fatalf("got %v, want %d", err, want)
		}
	}
	exec := func(want int) { t.Helper(); execID(ps.ID, want) }
	exec(0)
	exec(0) // the remembered verdict
	run("REVOKE SELECT ON test.t FROM u")
	exec(1142)
	run("GRANT SELECT ON test.t TO u")
	exec(0)
	// Another database: the unqualified t is other.t, where the role
	// (which lets the session USE other) grants INSERT only.
	if _, err := c.Execute(ctx, "SET ROLE reader"); err != nil {
		t.Fatal(err)
	}
	exec(0)
	if err := c.UseDB(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	exec(1142)
	run("GRANT SELECT ON other.t TO reader")
	exec(0)
	if _, err := c.Execute(ctx, "SET ROLE NONE"); err != nil {
		t.Fatal(err)
	}
	exec(1142)
	// Column grants are checked against the table's columns: a schema
	// change must be looked at again.
	if err := c.UseDB(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	run("REVOKE SELECT ON test.t FROM u")
	run("GRANT SELECT (id, c) ON test.t TO u")
	exec(0)
	star, err := c.Prepare(ctx, "SELECT * FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	execID(star.ID, 0)
	run("ALTER TABLE test.t ADD COLUMN d INT")
	exec(0)
	execID(star.ID, 1142) // * now covers d, which is not granted
	run("REVOKE SELECT (c) ON test.t FROM u")
	exec(1143)
}
