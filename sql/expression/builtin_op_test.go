package expression_test

import (
	"testing"
)

func TestThreeValuedLogic(t *testing.T) {
	runCases(t, []exprCase{
		{"TRUE AND NULL", "NULL", ""},
		{"FALSE AND NULL", "0", ""},
		{"NULL AND FALSE", "0", ""},
		{"NULL AND NULL", "NULL", ""},
		{"TRUE OR NULL", "1", ""},
		{"NULL OR TRUE", "1", ""},
		{"FALSE OR NULL", "NULL", ""},
		{"NOT NULL", "NULL", ""},
		{"NOT 0", "1", ""},
		{"NOT 5", "0", ""},
		{"NOT 0.0", "1", ""},
		{"NOT 'abc'", "1", ""},
		{"1 XOR 1", "0", ""},
		{"1 XOR 0", "1", ""},
		{"1 XOR NULL", "NULL", ""},
		{"2 AND 3", "1", ""},
		{"0.1 AND 1", "1", ""},
		{"'0' OR 0", "0", ""},
		{"(1 < 2) = 1", "1", ""},
	})
}
