package ddl

import (
	"fmt"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// DEFAULT CURRENT_TIMESTAMP and ON UPDATE CURRENT_TIMESTAMP in column
// definitions. MySQL 8 allows both on TIMESTAMP and DATETIME columns only,
// and the function's precision must be the column's
// (TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3)): a mismatch or another type
// is 1067 for DEFAULT and 1294 for ON UPDATE.

// currentTimestampCall reports whether e is CURRENT_TIMESTAMP, NOW(),
// LOCALTIME or LOCALTIMESTAMP, and its precision; ok is false for any
// other expression and for a precision that is not a constant 0..6.
func currentTimestampCall(e ast.ExprNode) (fsp int, ok bool) {
	f, isCall := e.(*ast.FuncCallExpr)
	if !isCall {
		return 0, false
	}
	switch f.FnName.L {
	case "current_timestamp", "now", "localtime", "localtimestamp":
	default:
		return 0, false
	}
	switch len(f.Args) {
	case 0:
		return 0, true
	case 1:
		v, isValue := f.Args[0].(*driver.ValueExpr)
		if !isValue {
			return 0, false
		}
		n, err := strconv.Atoi(fmt.Sprint(v.GetValue()))
		if err != nil || n < 0 || n > types.MaxFsp {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// takesCurrentTimestamp reports whether c's type and precision accept
// CURRENT_TIMESTAMP(fsp) as a default or ON UPDATE value.
func takesCurrentTimestamp(c *catalog.ColumnInfo, fsp int) bool {
	return (c.Type.Tp == mysql.TypeTimestamp || c.Type.Tp == mysql.TypeDatetime) && max(c.Type.Decimal, 0) == fsp
}

// columnDefaultText is the text a DEFAULT clause stores for column c:
// "CURRENT_TIMESTAMP" for that function (checked against c), else the
// literal's text (see literalText).
func columnDefaultText(c *catalog.ColumnInfo, e ast.ExprNode) (text string, isNull bool, err error) {
	if fsp, ok := currentTimestampCall(e); ok {
		if !takesCurrentTimestamp(c, fsp) {
			return "", false, errno.NewStd(mysql.ErrInvalidDefault, c.Name)
		}
		return "CURRENT_TIMESTAMP", false, nil
	}
	return literalText(e)
}

// setOnUpdate applies an ON UPDATE clause to c.
func setOnUpdate(c *catalog.ColumnInfo, e ast.ExprNode) error {
	fsp, ok := currentTimestampCall(e)
	if !ok || !takesCurrentTimestamp(c, fsp) {
		return errno.NewStd(mysql.ErrInvalidOnUpdate, c.Name)
	}
	c.OnUpdate = true
	return nil
}
