package expression_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// TestBuiltinsDatadriven runs testdata/<family>: each "eval" directive
// evaluates one expression per input line (as "SELECT <expr>") and prints
// "<expr> -> <result type>: <value>" (see eval for the value and its
// warnings). Expected outputs are MySQL 8.0's; a case where shoal differs
// is left out of the files until it is fixed.
func TestBuiltinsDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "eval" {
				d.Fatalf(t, "unknown directive %s", d.Cmd)
			}
			var out strings.Builder
			for _, src := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				if src = strings.TrimSpace(src); src == "" {
					continue
				}
				got, _, e := eval(t, src)
				if e != nil && !strings.HasPrefix(got, "error") {
					// A statement that fails shows MySQL's client no type.
					got = resultTypeString(e.Type()) + ": " + got
				}
				fmt.Fprintf(&out, "%s -> %s\n", src, got)
			}
			return out.String()
		})
	})
}

// resultTypeString names a result type as MySQL's result-set metadata
// does (the client's --column-type-info names): the protocol type, the
// decimals of exact and temporal types, UNSIGNED, and BINARY for strings of
// the binary character set. Display lengths are left out: shoal does not
// compute MySQL's yet.
func resultTypeString(ft *types.FieldType) string {
	name := map[byte]string{
		mysql.TypeLonglong: "LONGLONG", mysql.TypeNewDecimal: "NEWDECIMAL", mysql.TypeDouble: "DOUBLE",
		mysql.TypeFloat: "FLOAT", mysql.TypeVarString: "VAR_STRING", mysql.TypeString: "STRING",
		mysql.TypeVarchar: "VARCHAR", mysql.TypeDate: "DATE", mysql.TypeDatetime: "DATETIME",
		mysql.TypeTimestamp: "TIMESTAMP", mysql.TypeDuration: "TIME", mysql.TypeNull: "NULL",
	}[ft.Tp]
	if name == "" {
		name = fmt.Sprintf("type %d", ft.Tp)
	}
	switch {
	case ft.Tp == mysql.TypeNewDecimal || ft.IsTime() || ft.Tp == mysql.TypeDuration:
		name += fmt.Sprintf("(%d)", max(ft.Decimal, 0))
	case ft.IsString() && ft.Charset == "binary":
		name += " BINARY"
	}
	if ft.IsUnsigned() {
		name += " UNSIGNED"
	}
	return name
}
