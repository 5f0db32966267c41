package expression_test

import (
	"testing"
)

func TestMathFunctions(t *testing.T) {
	runCases(t, []exprCase{
		{"ABS(-5)", "5", ""},
		{"ROUND(2.5)", "3", ""},
		{"ROUND(-2.5)", "-3", ""},
		{"ROUND(1.2345, 2)", "1.23", ""},
		{"FLOOR(-1.5)", "-2", ""},
		{"CEIL(1.2)", "2", ""},
	})
}
