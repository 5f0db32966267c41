package expression_test

import (
	"testing"
)

func TestComparison(t *testing.T) {
	runCases(t, []exprCase{
		{"1 = '1'", "1", ""},
		{"1 = '1abc'", "1 warn 1292", "no-1292-truncated-double"},
		{"0 = 'abc'", "1 warn 1292", "no-1292-truncated-double"},
		{"'10' < '9'", "1", ""},
		{"10 < '9'", "0", ""},
		{"'abc' = 'ABC'", "1", "default-collation-bin"},
		{"'a' = 'a '", "0", ""},
		{"1.0 = 1", "1", ""},
		{"'1e1' = 10", "1", ""},
		{"2 BETWEEN 1 AND 3", "1", ""},
		{"2 BETWEEN 3 AND 1", "0", ""},
		{"'b' BETWEEN 'a' AND 'c'", "1", ""},
		{"2 IN (1, 2.0)", "1", ""},
		{"'2' IN (1, 2)", "1", ""},
		{"GREATEST(1, 3, 2)", "3", ""},
		{"LEAST('b', 'a')", "a", ""},
		{"GREATEST(1, 2.5)", "2.5", ""},
	})
}
