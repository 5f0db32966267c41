package acceptance

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

// No client can take the server down: each test below does what used to
// end the process or exhaust the machine, on its own server, and checks the
// server answers a fresh client afterwards.

// startLimitsServer starts shoal with o's options (tests here are about
// shoal's own limits: they skip for other targets).
func startLimitsServer(t *testing.T, o testserver.ShoalOptions) *testserver.Server {
	t.Helper()
	if target != "shoal" {
		t.Skipf("shoal's resource limits (target %s)", target)
	}
	dir := t.TempDir()
	o.Bin, o.DataDir, o.LogPath = shoalBin, dir+"/data", dir+"/shoal.log"
	s, err := testserver.StartShoal(o)
	if err != nil {
		t.Fatalf("start shoal: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(60 * time.Second); err != nil {
			t.Errorf("shoal did not stop cleanly on SIGTERM: %v\n%s", err, s.LogTail(4096))
		}
		if t.Failed() {
			t.Logf("shoal log tail:\n%s", s.LogTail(3000))
		}
	})
	return s
}

// freshLogin opens a new connection and runs a query, retrying for up to
// 30 s (freed slots and descriptors come back asynchronously).
func freshLogin(t *testing.T, s *testserver.Server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		if !s.Running() {
			t.Fatalf("the server exited\n%s", s.LogTail(3000))
		}
		db, err := sql.Open("mysql", s.DSN(""))
		if err != nil {
			t.Fatal(err)
		}
		var v int
		last = db.QueryRow("SELECT 1+1").Scan(&v)
		db.Close()
		if last == nil && v == 2 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no fresh login within 30s: %v", last)
}

func TestLimitsDeepExpression(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v any
	err = db.QueryRow("SELECT 1" + strings.Repeat("+1", 1_000_000)).Scan(&v)
	if me := sqlErr(err); me == nil || me.Number != 1436 {
		t.Fatalf("a million-term expression: %v", err)
	}
	freshLogin(t, s)
}

func TestLimitsHugeStringResults(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range []struct{ expr, fn string }{
		{"LPAD('a', 1000000000, 'b')", "lpad"},
		{"RPAD('a', 1000000000, 'b')", "rpad"},
		{"REPEAT('abc', 1000000000)", "repeat"},
		{"SPACE(1000000000)", "space"},
	} {
		var got sql.NullString
		if err := conn.QueryRowContext(context.Background(), "SELECT "+tc.expr).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got.Valid {
			t.Fatalf("%s is %d bytes, want NULL", tc.expr, len(got.String))
		}
		var level, msg string
		var code int
		if err := conn.QueryRowContext(context.Background(), "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
			t.Fatalf("%s warnings: %v", tc.expr, err)
		}
		want := fmt.Sprintf("Result of %s() was larger than max_allowed_packet (67108864) - truncated", tc.fn)
		if level != "Warning" || code != 1301 || msg != want {
			t.Fatalf("%s: warning %s %d %q", tc.expr, level, code, msg)
		}
	}
	freshLogin(t, s)
}

// dialIdle opens n TCP connections that never log in; it returns the ones
// that were accepted (at the descriptor limit some fail or are refused).
func dialIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			continue
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

func TestLimitsIdleConnectionsUnderFDLimit(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{NoFileLimit: 256})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	// Let every socket in, so accept runs out of descriptors (EMFILE).
	if _, err := db.Exec("SET GLOBAL max_connections = 1000"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for round := range 2 {
		idle := dialIdle(t, s.Addr(), 300)
		time.Sleep(500 * time.Millisecond) // let the accept loop hit the limit
		if !s.Running() {
			t.Fatalf("round %d: the server exited with %d idle connections\n%s", round, len(idle), s.LogTail(3000))
		}
		for _, c := range idle {
			c.Close()
		}
		freshLogin(t, s)
	}
	if !strings.Contains(s.LogTail(1<<20), "accept failed") {
		t.Errorf("the server never ran out of descriptors (no 'accept failed' in its log): the test did not test")
	}
}

func TestLimitsIdleConnectionsBeyondMaxConnections(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{NoFileLimit: 256})
	idle := dialIdle(t, s.Addr(), 300)
	// With the default max_connections (151) the sockets beyond it are
	// told 1040 at once rather than holding descriptors.
	refused := 0
	for _, c := range idle {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		hdr := make([]byte, 7)
		if _, err := bufio.NewReader(c).Read(hdr); err == nil && hdr[4] == 0xff && int(hdr[5])|int(hdr[6])<<8 == 1040 {
			refused++
		}
	}
	if refused < 300-152 {
		t.Fatalf("%d of 300 sockets were refused with 1040; want at least %d", refused, 300-152)
	}
	for _, c := range idle {
		c.Close()
	}
	freshLogin(t, s)
}

// vmRSS reads the resident set of process pid in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q", rest)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func TestLimitsLargeUnauthenticatedPackets(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	pid := s.PID()
	before := vmRSS(t, pid)
	chunk := make([]byte, 1<<20)
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := before
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			greeting := make([]byte, 256)
			if _, err := c.Read(greeting); err != nil {
				return
			}
			// Four full wire packets: 64 MiB declared and sent as the
			// handshake response.
			for seq := range 4 {
				if _, err := c.Write([]byte{0xff, 0xff, 0xff, byte(1 + seq)}); err != nil {
					return
				}
				for sent := 0; sent < 1<<24-1; sent += len(chunk) {
					n := min(len(chunk), 1<<24-1-sent)
					if _, err := c.Write(chunk[:n]); err != nil {
						return
					}
				}
				rss := vmRSS(t, pid)
				mu.Lock()
				peak = max(peak, rss)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	freshLogin(t, s)
	after := vmRSS(t, pid)
	t.Logf("VmRSS before %d MiB, peak seen %d MiB, after %d MiB", before>>20, peak>>20, after>>20)
	if peak > 512<<20 || after > 512<<20 {
		t.Fatalf("twelve unauthenticated 64 MiB packets grew the server to %d MiB (peak %d MiB)", after>>20, peak>>20)
	}
}

func TestLimitsMaxConnections(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // a closed *sql.Conn really disconnects
	if _, err := db.Exec("SET GLOBAL max_connections = 3"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	// max_connections, plus the one kept for CONNECTION_ADMIN (root).
	for i := range 4 {
		c, err := db.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		held = append(held, c)
	}
	c, err := db.Conn(ctx)
	if err == nil {
		err = c.PingContext(ctx)
		c.Close()
	}
	if me := sqlErr(err); me == nil || me.Number != 1040 || string(me.SQLState[:]) != "08004" {
		t.Fatalf("connection 5: %v", err)
	}
	held[0].Close()
	held = held[1:]
	freshLogin(t, s)
}

func TestLimitsMaxAllowedPacket(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	if _, err := db.Exec("SET GLOBAL max_allowed_packet = 4096"); err != nil {
		t.Fatal(err)
	}
	// A new session takes the new value; a larger packet is 1153 and ends
	// the connection, as in MySQL.
	var n int
	if err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("x", 3000) + "')").Scan(&n); err != nil || n != 3000 {
		t.Fatalf("3000-byte query: %v", err)
	}
	err = db.QueryRow("SELECT LENGTH('" + strings.Repeat("x", 5000) + "')").Scan(&n)
	if me := sqlErr(err); me == nil || me.Number != 1153 || string(me.SQLState[:]) != "08S01" {
		t.Fatalf("5000-byte query: %v", err)
	}
	freshLogin(t, s)
}

func TestLimitsMaxPreparedStmtCount(t *testing.T) {
	s := startLimitsServer(t, testserver.ShoalOptions{})
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("SET GLOBAL max_prepared_stmt_count = 2"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var stmts []*sql.Stmt
	for i := range 2 {
		st, err := conn.PrepareContext(context.Background(), fmt.Sprintf("SELECT %d", i))
		if err != nil {
			t.Fatalf("statement %d: %v", i+1, err)
		}
		stmts = append(stmts, st)
	}
	// COM_STMT_PREPARE and PREPARE alike, counted over the server.
	_, err = conn.PrepareContext(context.Background(), "SELECT 3")
	if me := sqlErr(err); me == nil || me.Number != 1461 || me.Message != "Can't create more than max_prepared_stmt_count statements (current value: 2)" {
		t.Fatalf("third COM_STMT_PREPARE: %v", err)
	}
	_, err = db.Exec("PREPARE p FROM 'SELECT 4'")
	if me := sqlErr(err); me == nil || me.Number != 1461 {
		t.Fatalf("PREPARE: %v", err)
	}
	stmts[0].Close()
	if _, err := conn.ExecContext(context.Background(), "PREPARE p FROM 'SELECT 4'"); err != nil {
		t.Fatalf("PREPARE after a close: %v", err)
	}
	stmts[1].Close()
}
