package expression

import (
	"math/big"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// bigArith is a op b (+, -, *) on integers, exactly.
func bigArith(op byte, a, b types.Datum) *big.Int {
	x, y := bigOf(a), bigOf(b)
	switch op {
	case '+':
		x.Add(x, y)
	case '-':
		x.Sub(x, y)
	case '*':
		x.Mul(x, y)
	}
	return x
}

// SignedSubtraction makes an integer subtraction's result signed even when
// an operand is UNSIGNED (sql_mode NO_UNSIGNED_SUBTRACTION): the result
// type loses UNSIGNED and the value must fit BIGINT. Other expressions are
// returned as they are.
func SignedSubtraction(e Expr) Expr {
	if f, ok := e.(*ScalarFunc); ok && f.Name == "minus" && f.Ft.Tp == mysql.TypeLonglong {
		f.Ft.Flag &^= mysql.UnsignedFlag
	}
	return e
}
