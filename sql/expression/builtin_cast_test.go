package expression_test

import (
	"testing"
)

func TestCast(t *testing.T) {
	runCases(t, []exprCase{
		{"CAST('123' AS SIGNED)", "123", ""},
		{"CAST('12abc' AS SIGNED)", "12 warn 1292", "cast-no-1292"},
		{"CAST(-1 AS UNSIGNED)", "18446744073709551615", ""},
		{"CAST(1.5 AS SIGNED)", "2", ""},
		{"CAST(-1.5 AS SIGNED)", "-2", ""},
		{"CAST(123 AS CHAR)", "123", ""},
		{"CAST('abc' AS CHAR(2))", "ab warn 1292", ""},
		{"CAST(1.567 AS DECIMAL(5,2))", "1.57", ""},
		{"CAST('3.14159' AS DECIMAL(10,3))", "3.142", ""},
		{"CAST(12 AS DECIMAL(10,2))", "12.00", ""},
		{"CAST(NULL AS SIGNED)", "NULL", ""},
		{"CAST('1e2' AS DOUBLE)", "100", ""},
		{"CAST(5 AS DOUBLE) / 2", "2.5", ""},
		{"CONVERT('42', SIGNED)", "42", ""},
	})
}
