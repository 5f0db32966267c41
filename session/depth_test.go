package session_test

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/session"
)

// deepShapes build statements nested n levels deep in the ways a client
// can nest: operator chains, parentheses, unary operators, function calls,
// CASE, and subqueries.
var deepShapes = map[string]func(n int) string{
	"plus chain": func(n int) string { return "SELECT 1" + strings.Repeat("+1", n) },
	"or chain":   func(n int) string { return "SELECT 1 FROM dual WHERE 0" + strings.Repeat(" OR 0", n) },
	"parens":     func(n int) string { return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) },
	"unary":      func(n int) string { return "SELECT " + strings.Repeat("-", n) + "1" },
	"not":        func(n int) string { return "SELECT " + strings.Repeat("NOT ", n) + "1" },
	"functions":  func(n int) string { return "SELECT " + strings.Repeat("ABS(", n) + "1" + strings.Repeat(")", n) },
	"case": func(n int) string {
		// Two syntax levels (CASE, WHEN) per CASE.
		return "SELECT " + strings.Repeat("CASE WHEN 1 THEN ", n/2) + "1" + strings.Repeat(" END", n/2)
	},
	"subqueries": func(n int) string {
		// About six syntax levels per subquery.
		return strings.Repeat("SELECT (", n/6) + "SELECT 1" + strings.Repeat(")", n/6)
	},
}

// deepOnlyShapes nest as deep but cannot run at 9000 levels (a 9000-way
// join); only their refusal is checked.
var deepOnlyShapes = map[string]func(n int) string{
	"comma joins": func(n int) string { return "SELECT 1 FROM dual AS a" + strings.Repeat(", dual AS a", n) },
	"join chain":  func(n int) string { return "SELECT 1 FROM t" + strings.Repeat(" JOIN t ON 1", n) },
	"hidden in a comment": func(n int) string {
		return "SELECT /*! 1" + strings.Repeat("+1", n) + " */"
	},
	"after ON": func(n int) string {
		return "SELECT 1 FROM t JOIN t ON 1" + strings.Repeat(", t JOIN t ON 1", n/2)
	},
}

// TestDeepStatements: a statement nested beyond the limit gets 1436, and
// the deepest statements that are allowed run through every stage within
// a 32 MiB goroutine stack (Go aborts the process past the limit, so this
// test would crash rather than fail if a stage recursed too much).
func TestDeepStatements(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20))
	h := newHarness(t)
	for name, shape := range deepShapes {
		t.Run(name, func(t *testing.T) {
			deep := 100_000
			if name == "plus chain" {
				deep = 1_000_000
			}
			out := run(h.ctx, h.cur, shape(deep), true, false)
			if !strings.HasPrefix(out, "error: 1436 HY000 Thread stack overrun") {
				t.Fatalf("%d levels: %.200s", deep, out)
			}
			out = run(h.ctx, h.cur, shape(9000), true, false)
			if strings.HasPrefix(out, "error:") {
				t.Fatalf("9000 levels: %.200s", out)
			}
		})
	}
	for name, shape := range deepOnlyShapes {
		deepShapes[name] = shape
	}
	for name, shape := range deepShapes {
		// The parser recurses too: the text check must catch each shape.
		if d := session.TextDepth(shape(200_000), session.MaxTextDepth); d <= session.MaxTextDepth {
			t.Errorf("%s: the text estimate %d lets 200000 levels reach the parser", name, d)
		}
	}
	for name, shape := range deepOnlyShapes {
		out := run(h.ctx, h.cur, shape(200_000), true, false)
		if !strings.HasPrefix(out, "error: 1436 HY000 Thread stack overrun") {
			t.Fatalf("%s: %.200s", name, out)
		}
	}
	// The session still serves.
	if out := run(h.ctx, h.cur, "SELECT 1+1", true, false); !strings.Contains(out, "2") {
		t.Fatal(out)
	}
}
