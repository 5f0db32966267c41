package ddl

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

func columnFieldType(col *ast.ColumnDef) types.FieldType {
	tp := col.Tp
	ft := types.FieldType{Tp: tp.GetType(), Flen: tp.GetFlen(), Decimal: tp.GetDecimal(), Flag: tp.GetFlag(),
		Charset: tp.GetCharset(), Collate: tp.GetCollate(), Elems: tp.GetElems()}
	defaultFlen := map[byte]int{mysql.TypeTiny: 4, mysql.TypeShort: 6, mysql.TypeInt24: 9, mysql.TypeLong: 11, mysql.TypeLonglong: 20,
		mysql.TypeString: 1, mysql.TypeBit: 1, mysql.TypeYear: 4}
	if ft.Flen == -1 || ft.Flen == 0 && ft.Tp != mysql.TypeVarchar && ft.Tp != mysql.TypeVarString {
		if f, ok := defaultFlen[ft.Tp]; ok {
			ft.Flen = f
			if ft.IsUnsigned() && ft.Tp != mysql.TypeLonglong {
				ft.Flen--
			}
		} else if ft.Tp == mysql.TypeNewDecimal {
			ft.Flen = 10
		} else {
			ft.Flen = 0
		}
	}
	if ft.Tp == mysql.TypeNewDecimal && ft.Decimal < 0 {
		ft.Decimal = 0
	}
	if ft.Tp == mysql.TypeVarString {
		ft.Tp = mysql.TypeVarchar
	}
	if ft.Tp == mysql.TypeFloat && ft.Flen > 24 {
		ft.Tp = mysql.TypeDouble
	}
	numeric := ft.IsInteger() || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeNewDecimal
	if numeric {
		ft.Charset, ft.Collate = "binary", "binary"
		ft.Flag |= mysql.BinaryFlag
	} else if ft.Charset == "" || (ft.Charset != "binary" && ft.Flag&mysql.BinaryFlag != 0 && ft.Charset == "") {
		ft.Charset, ft.Collate = "utf8mb4", "utf8mb4_bin"
	}
	if ft.Charset == "binary" && !numeric {
		ft.Collate = "binary"
		ft.Flag |= mysql.BinaryFlag
	}
	if ft.Collate == "" {
		ft.Collate = ft.Charset + "_bin"
		if ft.Charset == "utf8mb4" || ft.Charset == "utf8" {
			ft.Collate = "utf8mb4_bin"
		}
	}
	for _, o := range col.Options {
		if o.Tp == ast.ColumnOptionCollate {
			ft.Collate = o.StrValue
		}
	}
	if ft.Tp == mysql.TypeBlob || ft.Tp == mysql.TypeTinyBlob || ft.Tp == mysql.TypeMediumBlob || ft.Tp == mysql.TypeLongBlob {
		ft.Flag |= mysql.BlobFlag
	}
	return ft
}

// literalText evaluates a DEFAULT expression to its text; isNull when it is
// NULL.
func literalText(e ast.ExprNode) (text string, isNull bool, err error) {
	switch x := e.(type) {
	case *driver.ValueExpr:
		if x.Kind() == driver.KindNull {
			return "", true, nil
		}
		if x.Kind() == driver.KindMysqlDecimal {
			return x.GetMysqlDecimal().String(), false, nil
		}
		if x.Kind() == driver.KindBinaryLiteral {
			return string(x.GetBinaryLiteral()), false, nil
		}
		return fmt.Sprint(x.GetValue()), false, nil
	case *ast.UnaryOperationExpr:
		t, n, err := literalText(x.V)
		if err != nil || n {
			return t, n, err
		}
		if x.Op.String() == "minus" {
			if strings.HasPrefix(t, "-") {
				return t[1:], false, nil
			}
			return "-" + t, false, nil
		}
		return t, false, nil
	case *ast.FuncCallExpr:
		name := strings.ToUpper(x.FnName.O)
		if name == "CURRENT_TIMESTAMP" || name == "NOW" {
			return "CURRENT_TIMESTAMP", false, nil
		}
	}
	return "", false, errno.New(mysql.ErrInvalidDefault, "Invalid default value")
}
