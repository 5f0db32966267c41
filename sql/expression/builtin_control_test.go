package expression_test

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

func TestCaseAndNullFunctions(t *testing.T) {
	runCases(t, []exprCase{
		{"CASE WHEN 1 > 2 THEN 'a' WHEN 2 > 1 THEN 'b' END", "b", ""},
		{"CASE WHEN 1 > 2 THEN 'a' END", "NULL", ""},
		{"CASE WHEN NULL THEN 1 ELSE 2 END", "2", ""},
		{"CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END", "two", ""},
		{"CASE NULL WHEN NULL THEN 'null' ELSE 'other' END", "other", ""},
		{"CASE 1 WHEN 1.0 THEN 'eq' END", "eq", ""},
		{"CASE 'a' WHEN 'A' THEN 'ci' ELSE 'cs' END", "ci", "default-collation-bin"},
		{"CASE WHEN 1 THEN 1 ELSE 2.5 END", "1.0", ""},
		{"COALESCE(NULL, NULL, 3)", "3", ""},
		{"COALESCE(NULL, NULL)", "NULL", ""},
		{"COALESCE(NULL, 1, 'x')", "1", ""},
		{"IFNULL(NULL, 'b')", "b", ""},
		{"IFNULL(1, 'b')", "1", ""},
		{"IFNULL(NULL, 2.50)", "2.50", ""},
		{"NULLIF(1, 1)", "NULL", ""},
		{"NULLIF(1, 2)", "1", ""},
		{"NULLIF(NULL, 1)", "NULL", ""},
		{"NULLIF('a', 'A')", "NULL", "default-collation-bin"},
		{"IF(1 > 0, 'yes', 'no')", "yes", ""},
		{"IF(NULL, 'yes', 'no')", "no", ""},
		{"IF(0.5, 1, 2)", "1", ""},
		{"IF(TRUE, 1, 2.5)", "1.0", ""},
		{"IF(FALSE, 1, 'x')", "x", ""},
	})
}

// TestUnifiedTypes checks the result type of CASE/COALESCE/IFNULL/IF: int
// with int stays int, int with decimal is decimal, anything with a string is
// a string.
func TestUnifiedTypes(t *testing.T) {
	for _, c := range []struct {
		expr string
		tp   byte
	}{
		{"COALESCE(1, 2)", mysql.TypeLonglong},
		{"COALESCE(1, 2.5)", mysql.TypeNewDecimal},
		{"COALESCE(1, 'a')", mysql.TypeVarString},
		{"COALESCE(1, 1e0)", mysql.TypeDouble},
		{"IFNULL(NULL, 1)", mysql.TypeLonglong},
		{"IF(1, 2, 3)", mysql.TypeLonglong},
		{"IF(1, 2, 'x')", mysql.TypeVarString},
		{"CASE WHEN 1 THEN 1 ELSE 2.5 END", mysql.TypeNewDecimal},
		{"CASE WHEN 1 THEN 'a' ELSE 2 END", mysql.TypeVarString},
	} {
		_, _, e := eval(t, c.expr)
		if e == nil {
			t.Errorf("%s: did not build", c.expr)
			continue
		}
		if got := e.Type().Tp; got != c.tp {
			t.Errorf("type of %s = %d, want %d", c.expr, got, c.tp)
		}
	}
}
