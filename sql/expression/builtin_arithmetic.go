package expression

import (
	"math"
	"math/big"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// Arithmetic operators: + - * / DIV % (MOD), in integer, decimal or double
// as MySQL types them.

func init() {
	registerBuiltins("arithmetic", map[string]builtin{
		"plus":   twoArgs(arith('+'), arithType),
		"minus":  twoArgs(arith('-'), arithType),
		"mul":    twoArgs(arith('*'), mulType),
		"div":    twoArgs(evalDiv, divType),
		"intdiv": twoArgs(evalIntDiv, intType),
		"mod":    twoArgs(evalMod, modType),
	})
}

// arithType: integer when both sides are integers, decimal when a side is,
// double otherwise (strings convert to double).
func arithType(args []Expr) types.FieldType {
	dec, isDec, isFloat, unsigned, anyUnsigned := 0, false, false, false, false
	for _, a := range args {
		ft := a.Type()
		switch {
		case ft.Tp == mysql.TypeNewDecimal:
			isDec = true
			if ft.Decimal > dec {
				dec = ft.Decimal
			}
		case ft.IsInteger():
		case ft.Tp == mysql.TypeNull:
		default:
			isFloat = true
		}
		if ft.IsUnsigned() && ft.IsInteger() {
			anyUnsigned = true
		}
	}
	// MySQL: an integer operation with an unsigned operand is unsigned.
	unsigned = anyUnsigned
	switch {
	case isFloat:
		return doubleType(args)
	case isDec:
		a, b := args[0].Type(), args[1].Type()
		return decimalType(max(intDigits(a), intDigits(b))+1+dec, dec)
	}
	ft := intType(args)
	if unsigned {
		ft.Flag |= mysql.UnsignedFlag
	}
	return ft
}

// mulType: the scale of a product is the sum of the scales.
func mulType(args []Expr) types.FieldType {
	at := arithType(args)
	if at.Tp != mysql.TypeNewDecimal {
		return at
	}
	a, b := args[0].Type(), args[1].Type()
	return decimalType(intDigits(a)+intDigits(b)+decScale(a)+decScale(b), decScale(a)+decScale(b))
}

// divType: a quotient of exact numbers is a decimal whose scale is the
// dividend's plus div_precision_increment (4).
func divType(args []Expr) types.FieldType {
	at := arithType(args)
	if at.Tp == mysql.TypeDouble {
		return at
	}
	a, b := args[0].Type(), args[1].Type()
	s := decScale(a) + types.DivPrecisionIncrement
	return decimalType(intDigits(a)+decScale(b)+s, s)
}

// modType: MOD of decimals keeps the larger scale.
func modType(args []Expr) types.FieldType {
	at := arithType(args)
	if at.Tp != mysql.TypeNewDecimal {
		return at
	}
	a, b := args[0].Type(), args[1].Type()
	s := max(decScale(a), decScale(b))
	return decimalType(max(intDigits(a), intDigits(b))+s, s)
}

// isExact reports kinds that decimal arithmetic takes without rounding.
func isExact(d types.Datum) bool {
	k := d.Kind()
	return k == types.KindInt64 || k == types.KindUint64 || k == types.KindDecimal
}

// useDecimal decides, per evaluation, whether an arithmetic operator
// computes in decimal: when its type says so, or when its type was fixed
// before a parameter's value was known (a ? is typed as a string at
// prepare time) and both values are exact numbers.
func useDecimal(f *ScalarFunc, a, b types.Datum) bool {
	if f.Ft.Tp == mysql.TypeNewDecimal {
		return true
	}
	if !isExact(a) || !isExact(b) || (a.Kind() != types.KindDecimal && b.Kind() != types.KindDecimal) {
		return false
	}
	for _, arg := range f.Args {
		if _, ok := arg.(*Param); ok {
			return true
		}
	}
	return false
}

func errDecimalRange(op string, a, b types.Datum) error {
	return errno.New(mysql.ErrDataOutOfRange, "DECIMAL value is out of range in '(%s %s %s)'", a.String(), op, b.String())
}

func decimalArith(op byte, a, b types.Datum) (types.Datum, error) {
	x, _ := a.ToDecimal()
	y, _ := b.ToDecimal()
	var r types.Datum
	var err error
	switch op {
	case '+':
		r, err = types.DecimalAdd(x, y)
	case '-':
		r, err = types.DecimalSub(x, y)
	case '*':
		r, err = types.DecimalMul(x, y)
	}
	if err != nil {
		return types.Datum{}, errDecimalRange(string(op), a, b)
	}
	return r, nil
}

func overflow(op string, a, b types.Datum) error {
	return errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in '(%s %s %s)'", a.String(), op, b.String())
}

func isIntResult(f *ScalarFunc) bool { return f.Ft.Tp == mysql.TypeLonglong }

func arith(op byte) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		if isIntResult(f) {
			if f.Ft.IsUnsigned() {
				// Exact in big integers (operands may be negative signed
				// values); the result must fit BIGINT UNSIGNED.
				x := bigArith(op, a, b)
				if x.Sign() < 0 || !x.IsUint64() {
					return types.Datum{}, overflow(string(op), a, b)
				}
				return types.NewUint(x.Uint64()), nil
			}
			if a.Kind() == types.KindUint64 || b.Kind() == types.KindUint64 {
				// A signed result from an unsigned operand
				// (NO_UNSIGNED_SUBTRACTION): exact, then it must fit BIGINT.
				r := bigArith(op, a, b)
				if !r.IsInt64() {
					return types.Datum{}, overflow(string(op), a, b)
				}
				return types.NewInt(r.Int64()), nil
			}
			x, ok1 := a.ToInt()
			y, ok2 := b.ToInt()
			if !ok1 || !ok2 {
				return types.Datum{}, overflow(string(op), a, b)
			}
			switch op {
			case '+':
				r := x + y
				if (x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0) {
					return types.Datum{}, overflow("+", a, b)
				}
				return types.NewInt(r), nil
			case '-':
				r := x - y
				if (x >= 0 && y < 0 && r < 0) || (x < 0 && y > 0 && r >= 0) {
					return types.Datum{}, overflow("-", a, b)
				}
				return types.NewInt(r), nil
			case '*':
				if x == 0 || y == 0 {
					return types.NewInt(0), nil
				}
				r := x * y
				if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
					return types.Datum{}, overflow("*", a, b)
				}
				return types.NewInt(r), nil
			}
		}
		if useDecimal(f, a, b) {
			return decimalArith(op, a, b)
		}
		x, y := a.ToFloat(), b.ToFloat()
		var r float64
		switch op {
		case '+':
			r = x + y
		case '-':
			r = x - y
		case '*':
			r = x * y
		}
		if math.IsInf(r, 0) {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "DOUBLE value is out of range")
		}
		return types.NewFloat(r), nil
	}
}

func divByZero(ctx *Context) (types.Datum, error) {
	err := errno.New(mysql.ErrDivisionByZero, "Division by 0")
	switch ctx.DivZero {
	case DivZeroSilent:
	case DivZeroError:
		return types.Datum{}, err
	default:
		ctx.AppendWarning(err)
	}
	return types.Datum{}, nil
}

func evalDiv(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	if useDecimal(f, a, b) {
		x, _ := a.ToDecimal()
		y, _ := b.ToDecimal()
		r, dz, err := types.DecimalDiv(x, y, types.DivPrecisionIncrement)
		if dz {
			return divByZero(ctx)
		}
		if err != nil {
			return types.Datum{}, errDecimalRange("/", a, b)
		}
		return r, nil
	}
	y := b.ToFloat()
	if y == 0 {
		return divByZero(ctx)
	}
	return types.NewFloat(a.ToFloat() / y), nil
}

func evalIntDiv(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	if a.Kind() == types.KindInt64 && b.Kind() == types.KindInt64 {
		if b.Int() == 0 {
			return divByZero(ctx)
		}
		if a.Int() == math.MinInt64 && b.Int() == -1 {
			return types.Datum{}, overflow("DIV", a, b)
		}
		return types.NewInt(a.Int() / b.Int()), nil
	}
	if isExact(a) && isExact(b) {
		x, _ := a.ToDecimal()
		y, _ := b.ToDecimal()
		q, dz, ok := types.DecimalIntDiv(x, y)
		if dz {
			return divByZero(ctx)
		}
		if !ok {
			return types.Datum{}, overflow("DIV", a, b)
		}
		return types.NewInt(q), nil
	}
	y := b.ToFloat()
	if y == 0 {
		return divByZero(ctx)
	}
	return types.NewFloat(math.Trunc(a.ToFloat() / y)).ToIntDatum(), nil
}

func evalMod(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	if useDecimal(f, a, b) {
		x, _ := a.ToDecimal()
		y, _ := b.ToDecimal()
		r, dz, err := types.DecimalMod(x, y)
		if dz {
			return divByZero(ctx)
		}
		if err != nil {
			return types.Datum{}, errDecimalRange("%", a, b)
		}
		return r, nil
	}
	if isIntResult(f) {
		x, _ := a.ToInt()
		y, _ := b.ToInt()
		if y == 0 {
			return divByZero(ctx)
		}
		if y == -1 {
			return types.NewInt(0), nil
		}
		return types.NewInt(x % y), nil
	}
	y := b.ToFloat()
	if y == 0 {
		return divByZero(ctx)
	}
	return types.NewFloat(math.Mod(a.ToFloat(), y)), nil
}

func bigOf(d types.Datum) *big.Int {
	if d.Kind() == types.KindUint64 {
		return new(big.Int).SetUint64(d.Uint())
	}
	v, _ := d.ToInt()
	return big.NewInt(v)
}
