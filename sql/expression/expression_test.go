package expression_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// eval builds the expression of "SELECT <expr>" and evaluates it. It
// returns the value as MySQL's text protocol prints it (NULL as NULL), or
// "error <code>", followed by " warn <code>" for each warning.
func eval(t *testing.T, src string) (string, *expression.Context, expression.Expr) {
	t.Helper()
	stmts, _, err := parser.New().ParseSQL("SELECT " + src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	node := stmts[0].(*ast.SelectStmt).Fields.Fields[0].Expr
	e, _, err := planner.BuildScalar(&planner.Context{Schema: &catalog.InfoSchema{}}, node)
	if err != nil {
		return "build error " + errCode(err), nil, nil
	}
	ctx := &expression.Context{}
	d, err := e.Eval(ctx, nil)
	var out string
	switch {
	case err != nil:
		out = "error " + errCode(err)
	case d.IsNull():
		out = "NULL"
	case e.Type().Tp == mysql.TypeNewDecimal && (d.Kind() == types.KindFloat64 ||
		(d.Kind() == types.KindInt64 || d.Kind() == types.KindUint64) && e.Type().Decimal > 0):
		// DECIMAL results computed in floating point print with the
		// type's scale (as the session's result formatting does).
		out = strconv.FormatFloat(d.ToFloat(), 'f', max(e.Type().Decimal, 0), 64)
	default:
		out = string(d.AppendText(nil))
	}
	for _, w := range ctx.Warnings {
		out += " warn " + errCode(w)
	}
	return out, ctx, e
}

func errCode(err error) string {
	var se *errno.SQLError
	if errors.As(err, &se) {
		return fmt.Sprint(se.Code)
	}
	return err.Error()
}

// Bugs (bug field): MySQL 8 results that shoal does not produce yet.
//   - default-collation-bin: string comparison uses utf8mb4_bin; MySQL 8's
//     default utf8mb4_0900_ai_ci is case-insensitive.
//   - no-1292-truncated-double / cast-no-1292: a string that is not wholly
//     a number converts without MySQL's 1292 "Truncated incorrect ..." warning.
type exprCase struct {
	expr string
	want string
	bug  string // non-empty: shoal differs from MySQL (want is MySQL's)
}

func runCases(t *testing.T, cases []exprCase) {
	t.Helper()
	for _, c := range cases {
		got, _, _ := eval(t, c.expr)
		if got == c.want {
			if c.bug != "" {
				t.Logf("bug %q no longer reproduces for %s", c.bug, c.expr)
			}
			continue
		}
		if c.bug != "" {
			t.Logf("BUG: %s: SELECT %s: MySQL %q, shoal %q", c.bug, c.expr, c.want, got)
			continue
		}
		t.Errorf("SELECT %s = %q, want %q", c.expr, got, c.want)
	}
}

func TestNullPropagation(t *testing.T) {
	runCases(t, []exprCase{
		{"NULL + 1", "NULL", ""},
		{"1 - NULL", "NULL", ""},
		{"NULL * 0", "NULL", ""},
		{"NULL / 1", "NULL", ""},
		{"NULL = NULL", "NULL", ""},
		{"NULL <> 1", "NULL", ""},
		{"NULL < 1", "NULL", ""},
		{"NULL <=> NULL", "1", ""},
		{"1 <=> NULL", "0", ""},
		{"NULL IS NULL", "1", ""},
		{"NULL IS NOT NULL", "0", ""},
		{"-NULL", "NULL", ""},
		{"CONCAT('a', NULL)", "NULL", ""},
		{"CONCAT_WS(',', 'a', NULL, 'b')", "a,b", ""},
		{"LENGTH(NULL)", "NULL", ""},
		{"NULL LIKE 'a'", "NULL", ""},
		{"'a' LIKE NULL", "NULL", ""},
		{"NULL IN (1, 2)", "NULL", ""},
		{"1 IN (1, NULL)", "1", ""},
		{"3 IN (1, NULL)", "NULL", ""},
		{"3 NOT IN (1, NULL)", "NULL", ""},
		{"NULL BETWEEN 1 AND 2", "NULL", ""},
		{"ABS(NULL)", "NULL", ""},
		{"GREATEST(1, NULL, 3)", "NULL", ""},
		{"NULL IS TRUE", "0", ""},
		{"NULL IS FALSE", "0", ""},
		{"NULL IS UNKNOWN", "1", ""},
	})
}

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

func TestArithmetic(t *testing.T) {
	runCases(t, []exprCase{
		{"1 + 2 * 3", "7", ""},
		{"7 / 2", "3.5000", ""},
		{"1 / 3", "0.3333", ""},
		{"1 / 0", "NULL warn 1365", ""},
		{"1 DIV 0", "NULL warn 1365", ""},
		{"1 % 0", "NULL warn 1365", ""},
		{"MOD(5, 0)", "NULL warn 1365", ""},
		{"7 DIV 2", "3", ""},
		{"-7 DIV 2", "-3", ""},
		{"7 DIV -2", "-3", ""},
		{"7.9 DIV 2", "3", ""},
		{"7 % 3", "1", ""},
		{"-7 % 3", "-1", ""},
		{"7 % -3", "1", ""},
		{"-7 % -3", "-1", ""},
		{"MOD(-7, 3)", "-1", ""},
		{"7.5 % 2", "1.5", ""},
		{"9223372036854775807 + 1", "error 1690", ""},
		{"-9223372036854775808 - 1", "error 1690", ""},
		{"9223372036854775807 * 2", "error 1690", ""},
		{"-(-9223372036854775808)", "error 1690", ""},
		{"18446744073709551615 + 1", "error 1690", ""},
		{"CAST(0 AS UNSIGNED) - 1", "error 1690", ""},
		{"18446744073709551615 + 0", "18446744073709551615", ""},
		{"9223372036854775807 + 0", "9223372036854775807", ""},
		{"1.5 + 1", "2.5", ""},
		{"0.1 + 0.2", "0.3", ""},
		{"1e0 + 1", "2", ""},
		{"'3' + 4", "7", ""},
		{"'1.5' + 1", "2.5", ""},
		{"'abc' + 1", "1 warn 1292", "no-1292-truncated-double"},
		{"-(1)", "-1", ""},
		{"ABS(-5)", "5", ""},
		{"ROUND(2.5)", "3", ""},
		{"ROUND(-2.5)", "-3", ""},
		{"ROUND(1.2345, 2)", "1.23", ""},
		{"FLOOR(-1.5)", "-2", ""},
		{"CEIL(1.2)", "2", ""},
	})
}

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
