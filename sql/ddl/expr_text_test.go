package ddl

import (
	"testing"

	"github.com/shoaldb/shoal/sql/planner"
)

// TestExprTextRoundTrip checks that the text kept for an expression is
// MySQL's and reads back as the same expression (printing it again gives
// the same text).
func TestExprTextRoundTrip(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a > 0", "(`a` > 0)"},
		{"a + b * 2", "(`a` + (`b` * 2))"},
		{"a <> 1 AND NOT (b IS NULL)", "((`a` <> 1) and (not((`b` is null))))"},
		{"a IN (1, 2) OR b NOT BETWEEN 1 AND 5", "((`a` in (1,2)) or (`b` not between 1 and 5))"},
		{"s LIKE 'it''s\\\\%'", "(`s` like _utf8mb4'it''s\\\\%')"},
		{"-a MOD 3", "(-(`a`) % 3)"},
		{"CONCAT(a, 'x')", "concat(`a`,_utf8mb4'x')"},
		{"CASE WHEN a > 0 THEN 1 ELSE 0 END", "(case when (`a` > 0) then 1 else 0 end)"},
		{"DATE_ADD(d, INTERVAL 1 DAY)", "date_add(`d`, interval 1 day)"},
		{"TRIM(BOTH 'x' FROM s)", "trim(both _utf8mb4'x' from `s`)"},
	}
	for _, c := range cases {
		n, err := planner.ParseExprText(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got := exprText(n)
		if got != c.want {
			t.Errorf("%s: printed %s, want %s", c.in, got, c.want)
			continue
		}
		again, err := planner.ParseExprText(got)
		if err != nil {
			t.Errorf("%s: %s does not parse back: %v", c.in, got, err)
			continue
		}
		if got2 := exprText(again); got2 != got {
			t.Errorf("%s: reprinted as %s, first %s", c.in, got2, got)
		}
	}
}
