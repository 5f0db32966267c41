package sqlnode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/store/raftstore"
	"github.com/shoaldb/shoal/store/storenode"
)

// Every node, store and PD member a test starts must be stopped by it.
func TestMain(m *testing.M) { pdtest.RunWithLeakCheck(m) }

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testSQLConfig is a SQL node's configuration on the given loopback
// ports, for a PD at pdAddr.
func testSQLConfig(t *testing.T, pdAddr string, port, statusPort int) config.SQL {
	t.Helper()
	cfg := config.DefaultSQL()
	cfg.PD = pdAddr
	cfg.Port = port
	cfg.StatusPort = statusPort
	cfg.KVMaxBackoff = "10s"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestNodeInProcess starts a PD member, a store and a SQL node in this
// process and runs SQL through the MySQL protocol.
func TestNodeInProcess(t *testing.T) {
	log := quietLogger()
	pd := pdtest.Start(t, 1, nil)
	ports := pdtest.FreePorts(t, 3)
	storeAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	storeLn, err := net.Listen("tcp", storeAddr)
	if err != nil {
		t.Fatal(err)
	}
	store, err := storenode.Start(ctx, storenode.Config{
		PD: pd.Addrs(), Addr: storeAddr, DataDir: t.TempDir(), Version: "test",
		Raft:                   raftstore.Config{TickInterval: 50 * time.Millisecond, PDHeartbeatTicks: 6},
		StoreHeartbeatInterval: 300 * time.Millisecond,
		Logger:                 log.With("role", "store"),
	}, storeLn)
	if err != nil {
		storeLn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("store close: %v", err)
		}
	})

	node, err := Open(ctx, Config{SQL: testSQLConfig(t, pd.Addrs()[0], ports[1], ports[2]), Version: "test"}, log.With("role", "sql"))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			node.Close()
		}
	})

	db, err := sql.Open("mysql", "root@tcp("+node.Addr().String()+")/?timeout=5s&readTimeout=30s&writeTimeout=30s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qctx, qcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer qcancel()
	for _, stmt := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO d.t VALUES (1, 'one'), (2, 'two')",
	} {
		if _, err := db.ExecContext(qctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var sum int
	if err := db.QueryRowContext(qctx, "SELECT SUM(id) FROM d.t").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != 3 {
		t.Fatalf("sum %d", sum)
	}

	// Without configured certificates the node serves TLS with ones it
	// generated (into a temporary directory, removed at Close).
	tlsDB, err := sql.Open("mysql", "root@tcp("+node.Addr().String()+")/?tls=skip-verify&timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	defer tlsDB.Close()
	var name, cipher string
	if err := tlsDB.QueryRowContext(qctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher == "" {
		t.Fatalf("Ssl_cipher %q (%v)", cipher, err)
	}
	var certFile string
	if err := db.QueryRowContext(qctx, "SELECT @@ssl_cert").Scan(&certFile); err != nil || certFile == "" {
		t.Fatalf("@@ssl_cert %q (%v)", certFile, err)
	}
	tlsDB.Close()

	// /status: role, health (PD answers), the schema version the DDLs
	// moved.
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + node.StatusAddr().String() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Role != "sql" || st.Version != "test" || !st.Health || st.SchemaVersion == 0 {
		t.Fatalf("status %+v (%v)", st, err)
	}

	db.Close()
	closed = true
	if err := node.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case err := <-node.Err():
		if err != nil {
			t.Fatalf("serve ended with %v after Close", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Err delivered nothing after Close")
	}
	if c, err := net.DialTimeout("tcp", node.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("MySQL port still accepts after Close")
	}
	if _, err := os.Stat(certFile); !os.IsNotExist(err) {
		t.Fatalf("generated certificate %s still there after Close (%v)", certFile, err)
	}
}

// A taken port fails at once, before PD is contacted (none runs at
// 127.0.0.1:1), and leaves no port bound.
func TestOpenFailsFastOnTakenPort(t *testing.T) {
	ports := pdtest.FreePorts(t, 2)
	taken, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = Open(ctx, Config{SQL: testSQLConfig(t, "127.0.0.1:1", ports[0], ports[1])}, quietLogger())
	if err == nil || !strings.Contains(err.Error(), "cannot listen for status HTTP") || time.Since(start) > 5*time.Second {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	// The MySQL port bound first was let go.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	if err != nil {
		t.Fatalf("MySQL port still bound: %v", err)
	}
	ln.Close()
}

// Root without a password is not served on a non-loopback address unless
// asked for explicitly.
func TestOpenRefusesExposedRoot(t *testing.T) {
	cfg := config.DefaultSQL()
	cfg.PD = "127.0.0.1:1"
	cfg.Host = "0.0.0.0"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Open(ctx, Config{SQL: cfg}, quietLogger()); err == nil || !strings.Contains(err.Error(), "insecure-allow-empty-root-password") {
		t.Fatalf("exposed root: %v", err)
	}
}
