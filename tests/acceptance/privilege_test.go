package acceptance

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// openAs opens a pool logged in as user/password (one connection, so
// session state such as SET ROLE holds across statements).
func openAs(t *testing.T, s *testserver.Server, user, password, db string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", s.Addr(), db
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, 30*time.Second, 30*time.Second
	pool, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	pool.SetMaxOpenConns(1)
	t.Cleanup(func() { pool.Close() })
	return pool
}

// expectErr runs stmt and checks its outcome: code 0 means success.
func expectErr(t *testing.T, db *sql.DB, code uint16, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, stmt)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if code == 0 {
		if err != nil {
			t.Errorf("%s: %v, want success", stmt, err)
		}
		return
	}
	me := sqlErr(err)
	if me == nil || me.Number != code {
		t.Errorf("%s: %v, want error %d", stmt, err, code)
	}
}

func mustExecAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, st := range stmts {
		mustExec(t, db, st)
	}
}

// TestPrivileges is a privilege matrix over real connections: logins with
// both password plugins, each privilege level with the statements it
// governs (an account with it succeeds, one without gets MySQL's error),
// roles, a REVOKE reaching an open session, locking, and accounts
// surviving a restart. (MariaDB agrees on the error codes used here except
// 3118 and the role errors, which are MySQL 8's.)
func TestPrivileges(t *testing.T) {
	if target != "shoal" {
		t.Skip("the private MariaDB runs with grant tables skipped")
	}
	s := startServer(t)
	root, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	mustExecAll(t, root,
		"CREATE DATABASE app", "CREATE TABLE app.t (a INT PRIMARY KEY, b INT, c INT)", "INSERT INTO app.t VALUES (1, 2, 3)",
		"CREATE TABLE app.u (x INT PRIMARY KEY)",
		"CREATE USER nat@'%' IDENTIFIED WITH mysql_native_password BY 'natpw'",
		"CREATE USER sha@'%' IDENTIFIED BY 'shapw'", // caching_sha2_password, MySQL 8's default
		"CREATE USER glob@'%' IDENTIFIED BY 'g', dbu@'%' IDENTIFIED BY 'd', tbl@'%' IDENTIFIED BY 't', col@'%' IDENTIFIED BY 'c', none@'%' IDENTIFIED BY 'n', ru@'%' IDENTIFIED BY 'r'",
		"CREATE ROLE reader",
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP ON *.* TO glob",
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP ON app.* TO dbu",
		"GRANT SELECT, INSERT ON app.t TO tbl",
		"GRANT SELECT (a, b) ON app.t TO col",
		"GRANT SELECT ON app.* TO reader", "GRANT reader TO ru",
		"GRANT SELECT ON app.* TO nat, sha",
	)

	// Logins: both plugins, the caching_sha2 one twice (full authentication
	// over the RSA key exchange, then the cached fast path).
	for i := 0; i < 2; i++ {
		var cu string
		if err := openAs(t, s, "sha", "shapw", "app").QueryRow("SELECT CURRENT_USER()").Scan(&cu); err != nil || cu != "sha@%" {
			t.Fatalf("caching_sha2 login %d: %q, %v", i, cu, err)
		}
	}
	if err := openAs(t, s, "nat", "natpw", "app").Ping(); err != nil {
		t.Fatalf("native login: %v", err)
	}
	for _, c := range []struct{ user, pw string }{{"nat", "wrong"}, {"sha", "wrong"}, {"nobody", "x"}, {"nat", ""}} {
		err := openAs(t, s, c.user, c.pw, "").Ping()
		me := sqlErr(err)
		using := "YES"
		if c.pw == "" {
			using = "NO"
		}
		want := "Access denied for user '" + c.user + "'@'127.0.0.1' (using password: " + using + ")"
		if me == nil || me.Number != 1045 || string(me.SQLState[:]) != "28000" || me.Message != want {
			t.Errorf("login %s/%s: %v, want 1045 (28000) %s", c.user, c.pw, err, want)
		}
	}

	// The matrix: statement, then the expected outcome per account.
	users := map[string]*sql.DB{
		"glob": openAs(t, s, "glob", "g", ""), "dbu": openAs(t, s, "dbu", "d", ""),
		"tbl": openAs(t, s, "tbl", "t", ""), "col": openAs(t, s, "col", "c", ""), "none": openAs(t, s, "none", "n", ""),
	}
	matrix := []struct {
		stmt string
		want map[string]uint16
	}{
		{"SELECT a, b FROM app.t", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 0, "col": 0, "none": 1142}},
		{"SELECT c FROM app.t", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 0, "col": 1143, "none": 1142}},
		{"SELECT x FROM app.u", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 1142, "col": 1142, "none": 1142}},
		{"INSERT INTO app.t VALUES (10, 0, 0)", map[string]uint16{"glob": 0, "dbu": 1062, "tbl": 1062, "col": 1142, "none": 1142}},
		{"UPDATE app.t SET c = 5 WHERE a = 10", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 1142, "col": 1142, "none": 1142}},
		{"DELETE FROM app.t WHERE a = 10", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 1142, "col": 1142, "none": 1142}},
		{"USE app", map[string]uint16{"glob": 0, "dbu": 0, "tbl": 0, "col": 0, "none": 1044}},
		{"CREATE TABLE app.n (a INT PRIMARY KEY)", map[string]uint16{"glob": 0, "dbu": 1050, "tbl": 1142, "col": 1142, "none": 1142}},
		{"DROP TABLE app.n", map[string]uint16{"glob": 0, "dbu": 1051, "tbl": 1142, "col": 1142, "none": 1142}},
		{"CREATE DATABASE other", map[string]uint16{"glob": 0, "dbu": 1044, "tbl": 1044, "col": 1044, "none": 1044}},
		{"SET GLOBAL tidb_enable_1pc = 1", map[string]uint16{"glob": 1227, "dbu": 1227, "tbl": 1227, "col": 1227, "none": 1227}},
		{"CREATE USER someone@'%'", map[string]uint16{"glob": 1227, "dbu": 1227, "tbl": 1227, "col": 1227, "none": 1227}},
		{"BACKUP DATABASE app TO 'local:///nonexistent-dir-for-test'", map[string]uint16{"glob": 1227, "dbu": 1227, "tbl": 1227, "col": 1227, "none": 1227}},
	}
	for _, row := range matrix {
		for _, u := range []string{"glob", "dbu", "tbl", "col", "none"} {
			t.Run(u+"/"+strings.Fields(row.stmt)[0], func(t *testing.T) { expectErr(t, users[u], row.want[u], row.stmt) })
		}
	}
	var dbs []string
	rows, err := users["tbl"].Query("SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d string
		_ = rows.Scan(&d)
		dbs = append(dbs, d)
	}
	rows.Close()
	if strings.Join(dbs, ",") != "app,information_schema" {
		t.Errorf("SHOW DATABASES for a table-level grantee: %v", dbs)
	}

	// Roles: privileges only while active; a REVOKE reaches the open
	// session on its next statement.
	ru := openAs(t, s, "ru", "r", "")
	expectErr(t, ru, 1142, "SELECT a FROM app.t")
	expectErr(t, ru, 0, "SET ROLE reader")
	expectErr(t, ru, 0, "SELECT a FROM app.t")
	mustExec(t, root, "REVOKE SELECT ON app.* FROM reader")
	expectErr(t, ru, 1142, "SELECT a FROM app.t")
	mustExec(t, root, "REVOKE SELECT, INSERT ON app.t FROM tbl")
	expectErr(t, users["tbl"], 1142, "SELECT a FROM app.t")

	// Locking.
	mustExec(t, root, "ALTER USER none@'%' ACCOUNT LOCK")
	if me := sqlErr(openAs(t, s, "none", "n", "").Ping()); me == nil || me.Number != 3118 {
		t.Errorf("locked account login: %v, want 3118", me)
	}

	// Accounts, passwords and grants survive a restart.
	mustExec(t, root, "SET PASSWORD FOR nat@'%' = 'natpw2'")
	for _, db := range users {
		db.Close()
	}
	if err := s.Stop(60 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := s.Start(60 * time.Second); err != nil {
		t.Fatalf("restart: %v", err)
	}
	nat := openAs(t, s, "nat", "natpw2", "app")
	expectErr(t, nat, 0, "SELECT a FROM t")
	expectErr(t, nat, 1142, "INSERT INTO t VALUES (20, 0, 0)")
	if err := openAs(t, s, "sha", "shapw", "").Ping(); err != nil {
		t.Errorf("caching_sha2 login after restart: %v", err)
	}
	if me := sqlErr(openAs(t, s, "none", "n", "").Ping()); me == nil || me.Number != 3118 {
		t.Errorf("locked account after restart: %v, want 3118", me)
	}
}
