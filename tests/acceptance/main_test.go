// Package acceptance runs the shoal binary, built from this tree, against
// real clients: sysbench, the mysql CLI, go-sql-driver/mysql and the
// sqllogictest corpus. Each test starts its own server on a free loopback
// port with a temporary data directory and stops it at the end.
//
// SHOAL_BIN=path uses a prebuilt shoal binary instead of building one.
// SHOAL_TEST_TARGET=mariadb runs the same tests against a private MariaDB
// instead, which proves the harnesses themselves.
package acceptance

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

var (
	target   = "shoal" // or "mariadb"
	shoalBin string
)

func TestMain(m *testing.M) {
	if v := os.Getenv("SHOAL_TEST_TARGET"); v != "" {
		target = v
	}
	mysql.SetLogger(log.New(io.Discard, "", 0)) // the driver logs every killed connection
	code := func() int {
		if target == "shoal" && os.Getenv("SHOAL_BIN") != "" {
			shoalBin = os.Getenv("SHOAL_BIN")
			fmt.Fprintf(os.Stderr, "acceptance: using SHOAL_BIN=%s\n", shoalBin)
		} else if target == "shoal" {
			dir, err := os.MkdirTemp("", "shoal-acceptance-bin-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			start := time.Now()
			shoalBin, err = testserver.BuildShoal(dir)
			if err != nil {
				fmt.Fprintln(os.Stderr, "acceptance:", err)
				return 1
			}
			fmt.Fprintf(os.Stderr, "acceptance: built %s in %s\n", shoalBin, time.Since(start).Round(time.Millisecond))
		}
		return m.Run()
	}()
	os.Exit(code)
}

// startServer starts the target server with a fresh data directory (and
// shoalArgs as extra flags of a shoal server); it is
// stopped (SIGTERM, and for shoal a clean exit is asserted) when the test
// ends.
func startServer(t *testing.T, shoalArgs ...string) *testserver.Server {
	t.Helper()
	var (
		s   *testserver.Server
		err error
	)
	switch target {
	case "shoal":
		dir := t.TempDir()
		s, err = testserver.StartShoal(testserver.ShoalOptions{Bin: shoalBin, DataDir: dir + "/data", LogPath: dir + "/shoal.log", Args: shoalArgs})
	case "mariadb":
		if e := testserver.MariaDBAvailable(); e != nil {
			requireTool(t, "mariadbd")
		}
		s, err = testserver.StartMariaDB(t.TempDir())
	default:
		t.Fatalf("unknown SHOAL_TEST_TARGET %q", target)
	}
	if err != nil {
		t.Fatalf("start %s: %v", target, err)
	}
	t.Cleanup(func() {
		if err := s.Stop(60 * time.Second); err != nil && s.Kind == "shoal" {
			t.Errorf("shoal did not stop cleanly on SIGTERM: %v\n%s", err, s.LogTail(4096))
		}
		if t.Failed() {
			t.Logf("%s log tail:\n%s", s.Kind, s.LogTail(3000))
		}
	})
	return s
}

// requireTool skips the test when name is not installed, except in CI
// (CI=true), where a missing tool fails it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin"} {
		if _, err := os.Stat(d + "/" + name); err == nil {
			return d + "/" + name
		}
	}
	if testserver.InCI() {
		t.Fatalf("%s is required in CI but not installed (the README test command installs it)", name)
	}
	t.Skipf("%s not installed; skipping (install it with apt-get, or run the README test command)", name)
	return ""
}

// sqlErr extracts the MySQL error from err, or nil.
func sqlErr(err error) *mysql.MySQLError {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me
	}
	return nil
}
