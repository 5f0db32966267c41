package main

import (
	"io"
	"testing"
)

func TestBRStatement(t *testing.T) {
	cases := []struct {
		kind string
		args []string
		want string
	}{
		{"backup", []string{"--db", "shop", "--to", "local:///b/1"}, "BACKUP DATABASE `shop` TO 'local:///b/1'"},
		{"backup", []string{"--db", "a, b`c", "--to", `local:///it's\x`, "--concurrency", "8"}, "BACKUP DATABASE `a`, `b``c` TO 'local:///it''s\\\\x' CONCURRENCY = 8"},
		{"restore", []string{"--db", "*", "--from", "local:///b/1", "--checksum=false"}, "RESTORE DATABASE * FROM 'local:///b/1' CHECKSUM = FALSE"},
	}
	for _, c := range cases {
		cmd, err := brFlags(c.kind, c.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := cmd.statement(); got != c.want {
			t.Errorf("%s %v:\n got %s\nwant %s", c.kind, c.args, got, c.want)
		}
	}
	for _, args := range [][]string{{"--to", "local:///x"}, {"--db", "x"}, {"--db", "x", "--to", "local:///x", "extra"}, {"--db", "x", "--to", "local:///x", "--port", "0"}} {
		if _, err := brFlags("backup", args, io.Discard); err == nil {
			t.Errorf("backup %v: no error", args)
		}
	}
}
