package session

import (
	"strings"
	"testing"
)

func TestTextDepth(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want int
	}{
		{"SELECT 1", 1},
		{"SELECT 1+1+1", 3},
		{"SELECT ((1))", 3},
		{"SELECT a, b FROM t WHERE a = 1 AND b = 2", 3},
		{"SELECT '((((' , \"+++\", `a+b` -- ((((\n", 1},
		{"SELECT 1 /* ((((+++ */ + 1 # (((\n", 2},
		{"SELECT 'it''s (((', 'a\\'(((' ", 1},
		{"INSERT INTO t VALUES (1, -1), (2, -2), (3, -3)", 2},
		{"SELECT 1+1; SELECT 1", 2},
		{"SELECT (1+1+1) + 1", 4},
	} {
		if got := textDepth(tc.sql, 1000); got != tc.want {
			t.Errorf("textDepth(%q) = %d, want %d", tc.sql, got, tc.want)
		}
	}
	// A bulk insert of many rows is shallow however long.
	bulk := "INSERT INTO t VALUES " + strings.Repeat("(1, -2, 'x+y'),", 100000) + "(0, 0, '')"
	if got := textDepth(bulk, maxTextDepth); got > 3 {
		t.Errorf("bulk insert: %d", got)
	}
	// The scan stops once past the limit.
	if got := textDepth("SELECT "+strings.Repeat("(", 1000), 10); got != 11 {
		t.Errorf("stopped at %d", got)
	}
}
