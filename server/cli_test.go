package server

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMySQLCLI drives the installed mysql (MariaDB) command-line client, if
// there is one.
func TestMySQLCLI(t *testing.T) {
	bin, err := exec.LookPath("mysql")
	if err != nil {
		t.Skip("no mysql client")
	}
	env := startServer(t, Config{})
	host, port, _ := strings.Cut(env.addr, ":")
	run := func(args ...string) (string, error) {
		args = append([]string{"-h", host, "-P", port, "--protocol=tcp", "--connect-timeout=5"}, args...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	out, err := run("-uroot", "-e", "select 1")
	if err != nil || !strings.Contains(out, "1") {
		t.Fatalf("select 1: %v\n%s", err, out)
	}
	out, err = run("-ualice", "-psecret", "-D", "mydb", "-e", "select types; insert")
	if err != nil || !strings.Contains(out, "2024-02-29 13:14:15.123456") || !strings.Contains(out, "héllo") {
		t.Fatalf("select types: %v\n%s", err, out)
	}
	out, err = run("-ualice", "-pwrong", "-e", "select 1")
	if err == nil || !strings.Contains(out, "ERROR 1045 (28000)") {
		t.Fatalf("wrong password: %v\n%s", err, out)
	}
	out, err = run("-ualice", "-psecret", "--default-auth=caching_sha2_password", "-e", "select 1")
	if err != nil && !strings.Contains(out, "plugin") {
		t.Fatalf("caching_sha2_password client: %v\n%s", err, out)
	}
	t.Logf("caching_sha2_password client: %v %s", err, out)
	out, err = run("-uroot", "-e", "error")
	if err == nil || !strings.Contains(out, "ERROR 1146 (42S02)") {
		t.Fatalf("error: %v\n%s", err, out)
	}
}
