package expression_test

import (
	"testing"
)

func TestStringFunctions(t *testing.T) {
	runCases(t, []exprCase{
		{"CONCAT('a', 1, 2.5)", "a12.5", ""},
		{"LENGTH('héllo')", "6", ""},
		{"CHAR_LENGTH('héllo')", "5", ""},
		{"UPPER('abc')", "ABC", ""},
		{"LOWER('ABC')", "abc", ""},
		{"TRIM('  a  ')", "a", ""},
		{"SUBSTRING('hello', 2)", "ello", ""},
		{"SUBSTRING('hello', 2, 3)", "ell", ""},
		{"SUBSTRING('hello', -3)", "llo", ""},
		{"SUBSTRING('hello', 0)", "", ""},
		{"SUBSTR('héllo', 2, 2)", "él", ""},
	})
}
