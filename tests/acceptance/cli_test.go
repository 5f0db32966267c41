package acceptance

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMySQLCLI drives the real mysql client (mariadb-client) over TCP.
func TestMySQLCLI(t *testing.T) {
	bin := requireTool(t, "mysql")
	s := startServer(t)
	run := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		all := append([]string{"--no-defaults", "-h", "127.0.0.1", "-P", strconv.Itoa(s.Port), "-u", "root", "--protocol=TCP", "--batch"}, args...)
		cmd := exec.CommandContext(ctx, bin, all...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mysql %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	expect := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("mysql output lacks %q; got:\n%s", w, out)
			}
		}
	}

	out := run("", "-e", "SHOW DATABASES")
	expect(out, "Database\n")
	if strings.Contains(out, "clitest") {
		t.Fatalf("clitest exists before it was created:\n%s", out)
	}

	out = run("", "-e", "CREATE DATABASE clitest; CREATE TABLE clitest.t (id INT PRIMARY KEY, name VARCHAR(20), score DOUBLE);"+
		" INSERT INTO clitest.t VALUES (1, 'alpha', 1.5), (2, 'beta', NULL), (3, '', -2);"+
		" SELECT id, name, score FROM clitest.t ORDER BY id")
	expect(out, "id\tname\tscore\n1\talpha\t1.5\n2\tbeta\tNULL\n3\t\t-2\n")

	out = run("", "-e", "SHOW DATABASES")
	expect(out, "clitest\n")

	// Statements on stdin, with USE (COM_INIT_DB) and an aggregate.
	out = run("USE clitest;\nUPDATE t SET score = 10 WHERE id = 2;\nSELECT COUNT(*) AS n, SUM(score) AS s FROM t;\n")
	expect(out, "n\ts\n3\t9.5\n")

	// -D selects the database; -N drops column names.
	out = run("", "-D", "clitest", "-N", "-e", "SELECT name FROM t WHERE id = 1")
	if strings.TrimSpace(out) != "alpha" {
		t.Errorf("mysql -D clitest -N: got %q, want alpha", out)
	}

	// An error reaches the client with its code and a non-zero exit.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--no-defaults", "-h", "127.0.0.1", "-P", strconv.Itoa(s.Port), "-u", "root", "--protocol=TCP", "-e", "SELECT * FROM clitest.no_such_table")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "1146") {
		t.Errorf("unknown table through the CLI: err=%v output=%q, want ERROR 1146", err, b)
	}
	run("", "-e", "DROP DATABASE clitest")
}
