package expression_test

import (
	"testing"
)

func TestLike(t *testing.T) {
	runCases(t, []exprCase{
		{"'abc' LIKE 'a%'", "1", ""},
		{"'abc' LIKE '%c'", "1", ""},
		{"'abc' LIKE 'a_c'", "1", ""},
		{"'abc' LIKE 'a_'", "0", ""},
		{"'' LIKE '%'", "1", ""},
		{"'a%c' LIKE 'a\\%c'", "1", ""},
		{"'abc' LIKE 'a\\%c'", "0", ""},
		{"'a_c' LIKE 'a\\_c'", "1", ""},
		{"'abc' LIKE 'a\\_c'", "0", ""},
		{"'a%c' LIKE 'a|%c' ESCAPE '|'", "1", ""},
		{"'abc' LIKE 'a|%c' ESCAPE '|'", "0", ""},
		{"'ABC' LIKE 'abc'", "1", "default-collation-bin"},
		{"'abc' NOT LIKE 'b%'", "1", ""},
		{"123 LIKE '1%'", "1", ""},
		{"'aXbXc' LIKE '%X%X%'", "1", ""},
		{"'ab' LIKE '%%%b'", "1", ""},
	})
}
