package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/session"
)

// processIDs lists the connection ids SHOW PROCESSLIST shows c.
func processIDs(t *testing.T, c *sql.Conn) map[uint64]string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SELECT ID, USER FROM information_schema.PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[uint64]string{}
	for rows.Next() {
		var id uint64
		var user string
		if err := rows.Scan(&id, &user); err != nil {
			t.Fatal(err)
		}
		ids[id] = user
	}
	return ids
}

// TestProcessPrivileges: PROCESS shows every user's connections, else only
// one's own; CONNECTION_ADMIN (or SUPER) may kill another user's
// connection, else 1095.
func TestProcessPrivileges(t *testing.T) {
	_, dsn := startKillServer(t)
	rootDB, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer rootDB.Close()
	root := killConn(t, rootDB)
	for _, q := range []string{
		"CREATE USER plain IDENTIFIED WITH mysql_native_password BY 'p'",
		"CREATE USER watcher IDENTIFIED WITH mysql_native_password BY 'w'",
		"CREATE USER admin IDENTIFIED WITH mysql_native_password BY 'a'",
		"GRANT PROCESS ON *.* TO watcher",
		"GRANT CONNECTION_ADMIN ON *.* TO admin",
	} {
		mustExec(t, root, q)
	}
	rootID := connID(t, root)
	addr := strings.TrimSuffix(strings.TrimPrefix(dsn, "root@"), "/test")
	open := func(user, pw string) *sql.Conn {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@%s/", user, pw, addr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return killConn(t, db)
	}
	plain, watcher, admin := open("plain", "p"), open("watcher", "w"), open("admin", "a")
	plainID := connID(t, plain)

	if ids := processIDs(t, plain); len(ids) != 1 || ids[plainID] != "plain" {
		t.Fatalf("without PROCESS: %v, want only its own connection", ids)
	}
	if ids := processIDs(t, watcher); ids[rootID] != "root" || ids[plainID] != "plain" {
		t.Fatalf("with PROCESS: %v, want every connection", ids)
	}
	_, err = plain.ExecContext(context.Background(), fmt.Sprintf("KILL QUERY %d", rootID))
	if mysqlErrNum(err) != 1095 {
		t.Fatalf("KILL of another user's query without CONNECTION_ADMIN: %v, want 1095", err)
	}
	_, err = watcher.ExecContext(context.Background(), fmt.Sprintf("KILL %d", plainID))
	if mysqlErrNum(err) != 1095 {
		t.Fatalf("KILL with PROCESS alone: %v, want 1095", err)
	}
	mustExec(t, admin, fmt.Sprintf("KILL %d", plainID))
	waitGone(t, root, plainID, 10e9)
}

// TestConnectionAdminTakesTheExtraConnection: the connection beyond
// max_connections is for accounts with CONNECTION_ADMIN or SUPER.
func TestConnectionAdminTakesTheExtraConnection(t *testing.T) {
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	root, err := b.NewSession(ctx, "root", "127.0.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{
		"CREATE USER plain@'%'", "CREATE USER admin@'127.0.0.1'", "CREATE USER super@'%'", "CREATE ROLE ops",
		"CREATE USER viarole@'%'", "GRANT CONNECTION_ADMIN ON *.* TO admin@'127.0.0.1'", "GRANT SUPER ON *.* TO super",
		"GRANT CONNECTION_ADMIN ON *.* TO ops", "GRANT ops TO viarole", "SET DEFAULT ROLE ops TO viarole",
	} {
		if _, err := root.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct {
		user, host string
		want       bool
	}{
		{"root", "127.0.0.1", true}, {"plain", "127.0.0.1", false}, {"admin", "127.0.0.1", true},
		{"admin", "10.0.0.1", false}, {"super", "10.0.0.1", true}, {"viarole", "127.0.0.1", true}, {"nobody", "127.0.0.1", false},
	} {
		if got := b.HasConnectionAdmin(c.user, c.host); got != c.want {
			t.Errorf("HasConnectionAdmin(%s, %s) = %v, want %v", c.user, c.host, got, c.want)
		}
	}
}
