package session_test

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// The status flags tell clients how to escape strings: MySQL sets
// SERVER_STATUS_NO_BACKSLASH_ESCAPES while the mode is on.
func TestNoBackslashEscapesStatusFlag(t *testing.T) {
	h := newHarness(t)
	if h.cur.Status()&mysql.ServerStatusNoBackslashEscaped != 0 {
		t.Fatal("flag set under the default sql_mode")
	}
	if out := run(h.ctx, h.cur, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'", false, false); out != "ok\n" {
		t.Fatal(out)
	}
	if h.cur.Status()&mysql.ServerStatusNoBackslashEscaped == 0 {
		t.Fatal("flag not set under NO_BACKSLASH_ESCAPES")
	}
	if out := run(h.ctx, h.cur, "SET sql_mode = DEFAULT", false, false); out != "ok\n" {
		t.Fatal(out)
	}
	if h.cur.Status()&mysql.ServerStatusNoBackslashEscaped != 0 {
		t.Fatal("flag still set after SET sql_mode = DEFAULT")
	}
}
