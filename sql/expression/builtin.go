package expression

import (
	"bytes"
	"math"
	"math/big"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

var (
	errIncorrectArgs          = errno.New(mysql.ErrWrongArguments, "Incorrect arguments to EXECUTE")
	errSubqueryMoreThanOneRow = errno.NewStd(mysql.ErrSubqueryNo1Row)
)

type evalFunc func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error)

// ScalarFunc is an operator or built-in function applied to arguments.
type ScalarFunc struct {
	Name          string
	Args          []Expr
	Ft            types.FieldType
	Deterministic bool
	fn            evalFunc
}

func (f *ScalarFunc) Eval(ctx *Context, row types.Row) (types.Datum, error) { return f.fn(ctx, f, row) }
func (f *ScalarFunc) Type() *types.FieldType                                { return &f.Ft }

type builtin struct {
	minArgs, maxArgs int // maxArgs -1: variadic
	fn               evalFunc
	retType          func(args []Expr) types.FieldType
	nondeterministic bool
}

var builtins map[string]builtin

// NewFunction binds a function or operator by name.
func NewFunction(name string, args ...Expr) (Expr, error) {
	name = strings.ToLower(name)
	b, ok := builtins[name]
	if !ok {
		return nil, errno.New(mysql.ErrSpDoesNotExist, "FUNCTION %s does not exist", name)
	}
	if len(args) < b.minArgs || (b.maxArgs >= 0 && len(args) > b.maxArgs) {
		return nil, errno.New(mysql.ErrWrongParamcountToNativeFct, "Incorrect parameter count in the call to native function '%s'", name)
	}
	f := &ScalarFunc{Name: name, Args: args, fn: b.fn, Deterministic: !b.nondeterministic}
	f.Ft = b.retType(args)
	return f, nil
}

// Type helpers.

func intType(args []Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.BinaryFlag}
}
func boolType(args []Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeLonglong, Flen: 1, Flag: mysql.BinaryFlag}
}
func doubleType(args []Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeDouble, Flen: 22, Decimal: -1, Flag: mysql.BinaryFlag}
}
func stringType(args []Expr) types.FieldType {
	n := 0
	for _, a := range args {
		n += a.Type().Flen
	}
	return types.FieldType{Tp: mysql.TypeVarString, Flen: n, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
}
func firstArgType(args []Expr) types.FieldType { return *args[0].Type() }

func isFloatType(ft *types.FieldType) bool {
	return ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat || ft.IsString() && ft.Tp != mysql.TypeNewDecimal
}

// decScale is the scale an argument contributes to decimal arithmetic
// (integers have 0).
func decScale(ft *types.FieldType) int {
	if ft.Tp == mysql.TypeNewDecimal {
		return min(max(ft.Decimal, 0), types.MaxDecimalScale)
	}
	return 0
}

// intDigits is the number of integer digits a decimal or integer argument
// may have.
func intDigits(ft *types.FieldType) int {
	switch {
	case ft.Tp == mysql.TypeNewDecimal:
		if ft.Flen <= 0 {
			return types.MaxDecimalPrecision - decScale(ft)
		}
		return max(ft.Flen-decScale(ft), 1)
	case ft.IsInteger():
		if ft.Flen <= 0 || ft.Flen > 20 {
			return 20
		}
		return ft.Flen
	}
	return types.MaxDecimalPrecision
}

func decimalType(prec, scale int) types.FieldType {
	scale = min(scale, types.MaxDecimalScale)
	prec = min(max(prec, scale, 1), types.MaxDecimalPrecision)
	return types.FieldType{Tp: mysql.TypeNewDecimal, Flen: prec, Decimal: scale, Flag: mysql.BinaryFlag}
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

func evalArgs2(ctx *Context, f *ScalarFunc, row types.Row) (a, b types.Datum, null bool, err error) {
	a, err = f.Args[0].Eval(ctx, row)
	if err != nil || a.IsNull() {
		return a, b, true, err
	}
	b, err = f.Args[1].Eval(ctx, row)
	if err != nil || b.IsNull() {
		return a, b, true, err
	}
	return a, b, false, nil
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
				x, y := bigOf(a), bigOf(b)
				switch op {
				case '+':
					x.Add(x, y)
				case '-':
					x.Sub(x, y)
				case '*':
					x.Mul(x, y)
				}
				if x.Sign() < 0 || !x.IsUint64() {
					return types.Datum{}, overflow(string(op), a, b)
				}
				return types.NewUint(x.Uint64()), nil
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
	ctx.AppendWarning(errno.New(mysql.ErrDivisionByZero, "Division by 0"))
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

func cmpFunc(op string) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		return types.NewBool(compareOp(op, CompareForArgs(f.Args[0], f.Args[1], a, b))), nil
	}
}

// CompareForArgs compares two values of the given expressions, using a
// case-insensitive comparison when either side has a _ci collation.
func CompareForArgs(ea, eb Expr, a, b types.Datum) int {
	if isCI(ea.Type()) || isCI(eb.Type()) {
		return types.CompareCI(a, b)
	}
	return types.Compare(a, b)
}

func isCI(ft *types.FieldType) bool { return strings.HasSuffix(ft.Collate, "_ci") }

func evalNullEQ(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return a, err
	}
	b, err := f.Args[1].Eval(ctx, row)
	if err != nil {
		return b, err
	}
	if a.IsNull() || b.IsNull() {
		return types.NewBool(a.IsNull() && b.IsNull()), nil
	}
	return types.NewBool(CompareForArgs(f.Args[0], f.Args[1], a, b) == 0), nil
}

// logicFold evaluates AND (stop on false) or OR (stop on true) with
// three-valued logic: the stopping value wins, else NULL if any operand was
// NULL, else the other value.
func logicFold(stopOn bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		null := false
		for _, arg := range f.Args {
			d, err := arg.Eval(ctx, row)
			if err != nil {
				return d, err
			}
			v, ok := d.ToBool()
			if !ok {
				null = true
			} else if v == stopOn {
				return types.NewBool(stopOn), nil
			}
		}
		if null {
			return types.Datum{}, nil
		}
		return types.NewBool(!stopOn), nil
	}
}

var (
	evalAnd = logicFold(false)
	evalOr  = logicFold(true)
)

func evalXor(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	x, _ := a.ToBool()
	y, _ := b.ToBool()
	return types.NewBool(x != y), nil
}

func evalNot(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	v, _ := d.ToBool()
	return types.NewBool(!v), nil
}

func evalNeg(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	switch d.Kind() {
	case types.KindInt64:
		if d.Int() == math.MinInt64 {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in '-(%d)'", d.Int())
		}
		return types.NewInt(-d.Int()), nil
	case types.KindUint64:
		if d.Uint() > 1<<63 {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in '-(%d)'", d.Uint())
		}
		return types.NewInt(-int64(d.Uint())), nil
	case types.KindDecimal:
		return types.DecimalNeg(d), nil
	}
	if f.Ft.Tp == mysql.TypeNewDecimal {
		x, _ := d.ToDecimal()
		return types.DecimalNeg(x), nil
	}
	return types.NewFloat(-d.ToFloat()), nil
}

func evalIsNull(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return d, err
	}
	return types.NewBool(d.IsNull()), nil
}

func evalIsTrue(want bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil {
			return d, err
		}
		v, ok := d.ToBool()
		return types.NewBool(ok && v == want), nil
	}
}

// evalIn: args[0] IN (args[1:]).
func evalIn(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	l, err := f.Args[0].Eval(ctx, row)
	if err != nil || l.IsNull() {
		return types.Datum{}, err
	}
	null := false
	for _, a := range f.Args[1:] {
		r, err := a.Eval(ctx, row)
		if err != nil {
			return r, err
		}
		if r.IsNull() {
			null = true
			continue
		}
		if CompareForArgs(f.Args[0], a, l, r) == 0 {
			return types.NewInt(1), nil
		}
	}
	if null {
		return types.Datum{}, nil
	}
	return types.NewInt(0), nil
}

func evalLike(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	escape := byte('\\')
	if len(f.Args) > 2 {
		e, err := f.Args[2].Eval(ctx, row)
		if err != nil {
			return e, err
		}
		if len(e.Bytes()) > 0 {
			escape = e.Bytes()[0]
		}
	}
	s, p := toStr(a), toStr(b)
	ci := isCI(f.Args[0].Type()) || isCI(f.Args[1].Type())
	if ci {
		s, p = bytes.ToLower(s), bytes.ToLower(p)
	}
	return types.NewBool(likeMatch(s, p, escape)), nil
}

// likeMatch matches s against a LIKE pattern without recursion: a pattern
// is client data (up to max_allowed_packet), so neither its length nor its
// number of '%' may decide the stack depth. On a mismatch it backtracks to
// the last '%' only, which suffices (an earlier '%' could only absorb less),
// so the cost is at most len(s)*len(p).
func likeMatch(s, p []byte, esc byte) bool {
	si, pi := 0, 0
	lastPct, resume := -1, 0 // pattern index after the last '%', and where s resumes
	for si < len(s) {
		if pi < len(p) {
			c := p[pi]
			switch {
			case c == '%':
				for pi < len(p) && p[pi] == '%' {
					pi++
				}
				if pi == len(p) {
					return true
				}
				lastPct, resume = pi, si
				continue
			case c == esc && pi+1 < len(p):
				if s[si] == p[pi+1] {
					si, pi = si+1, pi+2
					continue
				}
			case c == '_' || s[si] == c:
				si, pi = si+1, pi+1
				continue
			}
		}
		if lastPct < 0 {
			return false
		}
		resume++
		si, pi = resume, lastPct
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

func toStr(d types.Datum) []byte {
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		return d.Bytes()
	}
	return d.AppendText(nil)
}

// evalCase: args are [operand?] (when, then)* [else]; Ft.Elems unused. The
// operand form is encoded by the planner as a leading arg with name
// "case_operand"; here a flag in Ft would be clumsy, so two funcs exist.
func evalCaseWhen(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	n := len(f.Args)
	for i := 0; i+1 < n; i += 2 {
		c, err := f.Args[i].Eval(ctx, row)
		if err != nil {
			return c, err
		}
		if v, ok := c.ToBool(); ok && v {
			return castResult(f, f.Args[i+1], ctx, row)
		}
	}
	if n%2 == 1 {
		return castResult(f, f.Args[n-1], ctx, row)
	}
	return types.Datum{}, nil
}

func evalCaseOperand(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	op, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return op, err
	}
	n := len(f.Args)
	for i := 1; i+1 < n; i += 2 {
		w, err := f.Args[i].Eval(ctx, row)
		if err != nil {
			return w, err
		}
		if !op.IsNull() && !w.IsNull() && CompareForArgs(f.Args[0], f.Args[i], op, w) == 0 {
			return castResult(f, f.Args[i+1], ctx, row)
		}
	}
	if (n-1)%2 == 1 {
		return castResult(f, f.Args[n-1], ctx, row)
	}
	return types.Datum{}, nil
}

// castResult evaluates e and converts it to f's result type class, so that a
// CASE/IF/COALESCE mixing ints and strings returns one kind.
func castResult(f *ScalarFunc, e Expr, ctx *Context, row types.Row) (types.Datum, error) {
	d, err := e.Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	return ConvertTo(d, &f.Ft), nil
}

// ConvertTo converts d to the value class of ft (int, double, string).
func ConvertTo(d types.Datum, ft *types.FieldType) types.Datum {
	if d.IsNull() {
		return d
	}
	switch {
	case ft.IsInteger():
		if ft.IsUnsigned() && d.Kind() == types.KindUint64 {
			return d
		}
		if d.Kind() == types.KindInt64 {
			return d
		}
		v, _ := d.ToInt()
		return types.NewInt(v)
	case ft.Tp == mysql.TypeNewDecimal:
		x, _ := d.ToDecimal()
		if ft.Decimal >= 0 && ft.Decimal != x.DecimalScale() {
			x, _ = types.DecimalRound(x, ft.Decimal, types.RoundHalfUp)
		}
		return x
	case ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat:
		if d.Kind() == types.KindFloat64 {
			return d
		}
		return types.NewFloat(d.ToFloat())
	case ft.IsTime():
		if d.Kind() == types.KindTime && d.TimeType() == ft.Tp {
			return d
		}
		if t, err := d.ToTime(ft.Tp, max(ft.Decimal, 0)); err == nil {
			return t
		}
		return types.Datum{}
	case ft.Tp == mysql.TypeDuration:
		if d.Kind() == types.KindDuration {
			return d
		}
		if t, err := d.ToDuration(max(ft.Decimal, 0)); err == nil {
			return t
		}
		return types.Datum{}
	case ft.IsString():
		if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
			return d
		}
		return types.NewStringBytes(d.AppendText(nil))
	}
	return d
}

// unifiedType is the result type of CASE/IF/COALESCE over the given value
// expressions.
func unifiedType(args []Expr) types.FieldType {
	var res *types.FieldType
	for _, a := range args {
		ft := a.Type()
		if ft.Tp == mysql.TypeNull {
			continue
		}
		if res == nil {
			c := *ft
			res = &c
			continue
		}
		switch {
		case res.IsInteger() && ft.IsInteger():
			if ft.Flen > res.Flen {
				res.Flen = ft.Flen
			}
			if !ft.IsUnsigned() {
				res.Flag &^= mysql.UnsignedFlag
			}
		case (res.IsInteger() || res.Tp == mysql.TypeNewDecimal) && (ft.IsInteger() || ft.Tp == mysql.TypeNewDecimal):
			dec := max(decScale(res), decScale(ft))
			*res = decimalType(max(intDigits(res), intDigits(ft))+dec, dec)
		case res.IsTime() && ft.IsTime():
			if ft.Tp != res.Tp {
				*res = TimeFieldType(mysql.TypeDatetime, max(res.Decimal, ft.Decimal))
			} else {
				res.Decimal = max(res.Decimal, ft.Decimal)
			}
		case res.Tp == mysql.TypeDuration && ft.Tp == mysql.TypeDuration:
			res.Decimal = max(res.Decimal, ft.Decimal)
		case isNumericType(res) && isNumericType(ft):
			*res = doubleType(nil)
		default:
			n := max(res.Flen, ft.Flen)
			*res = stringType(nil)
			res.Flen = n
		}
	}
	if res == nil {
		return types.FieldType{Tp: mysql.TypeNull, Flag: mysql.BinaryFlag}
	}
	res.Flag &^= mysql.NotNullFlag | mysql.PriKeyFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag | mysql.AutoIncrementFlag
	return *res
}

func isNumericType(ft *types.FieldType) bool {
	return ft.IsInteger() || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeNewDecimal
}

func caseWhenType(args []Expr) types.FieldType {
	var vals []Expr
	n := len(args)
	for i := 1; i < n; i += 2 {
		vals = append(vals, args[i])
	}
	if n%2 == 1 {
		vals = append(vals, args[n-1])
	}
	return unifiedType(vals)
}

func caseOperandType(args []Expr) types.FieldType {
	return caseWhenType(args[1:])
}

func evalIf(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	c, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return c, err
	}
	if v, ok := c.ToBool(); ok && v {
		return castResult(f, f.Args[1], ctx, row)
	}
	return castResult(f, f.Args[2], ctx, row)
}

func evalCoalesce(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	for _, a := range f.Args {
		d, err := a.Eval(ctx, row)
		if err != nil {
			return d, err
		}
		if !d.IsNull() {
			return ConvertTo(d, &f.Ft), nil
		}
	}
	return types.Datum{}, nil
}

func evalNullIf(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, err := f.Args[0].Eval(ctx, row)
	if err != nil || a.IsNull() {
		return a, err
	}
	b, err := f.Args[1].Eval(ctx, row)
	if err != nil {
		return b, err
	}
	if !b.IsNull() && CompareForArgs(f.Args[0], f.Args[1], a, b) == 0 {
		return types.Datum{}, nil
	}
	return a, nil
}

func evalAbs(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	switch d.Kind() {
	case types.KindInt64:
		if d.Int() < 0 {
			if d.Int() == math.MinInt64 {
				return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in 'abs(%d)'", d.Int())
			}
			return types.NewInt(-d.Int()), nil
		}
		return d, nil
	case types.KindUint64:
		return d, nil
	case types.KindDecimal:
		return types.DecimalAbs(d), nil
	}
	return types.NewFloat(math.Abs(d.ToFloat())), nil
}

func numFunc1(fn func(float64) float64) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return d, err
		}
		if d.Kind() == types.KindDecimal && (f.Name == "floor" || f.Name == "ceil" || f.Name == "ceiling") {
			mode := types.RoundFloor
			if f.Name != "floor" {
				mode = types.RoundCeil
			}
			r, _ := types.DecimalRound(d, 0, mode)
			if f.Ft.IsInteger() {
				if v, ok := r.ToInt(); ok {
					return types.NewInt(v), nil
				}
			}
			return r, nil
		}
		if (d.Kind() == types.KindInt64 || d.Kind() == types.KindUint64) && f.Ft.IsInteger() {
			return d, nil
		}
		r := fn(d.ToFloat())
		if f.Ft.IsInteger() {
			return types.NewFloat(r).ToIntDatum(), nil
		}
		return types.NewFloat(r), nil
	}
}

func roundType(args []Expr) types.FieldType {
	at := args[0].Type()
	if at.IsInteger() {
		return intType(args)
	}
	if at.Tp == mysql.TypeNewDecimal {
		s := 0
		if len(args) > 1 {
			s = decScale(at)
			if c, ok := args[1].(*Constant); ok && !c.Value.IsNull() {
				v, _ := c.Value.ToInt()
				s = int(min(max(v, 0), types.MaxDecimalScale))
			}
		}
		return decimalType(intDigits(at)+1+s, s)
	}
	return doubleType(args)
}

func evalRound(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	places := int64(0)
	if len(f.Args) > 1 {
		p, err := f.Args[1].Eval(ctx, row)
		if err != nil || p.IsNull() {
			return types.Datum{}, err
		}
		places, _ = p.ToInt()
	}
	if d.Kind() == types.KindInt64 && places >= 0 {
		return d, nil
	}
	if d.Kind() == types.KindDecimal || (f.Ft.Tp == mysql.TypeNewDecimal && isExact(d)) {
		x, _ := d.ToDecimal()
		mode := types.RoundHalfUp
		if f.Name == "truncate" {
			mode = types.RoundTrunc
		}
		r, _ := types.DecimalRound(x, int(max(min(places, 100), -100)), mode)
		if f.Ft.Tp == mysql.TypeNewDecimal && places >= 0 && int64(f.Ft.Decimal) > places {
			r, _ = types.DecimalRound(r, f.Ft.Decimal, types.RoundHalfUp) // pad to the type's scale
		}
		if f.Ft.IsInteger() {
			v, _ := r.ToInt()
			return types.NewInt(v), nil
		}
		return r, nil
	}
	if f.Name == "truncate" {
		scale := math.Pow(10, float64(places))
		r := math.Trunc(d.ToFloat()*scale) / scale
		if f.Ft.IsInteger() {
			return types.NewFloat(r).ToIntDatum(), nil
		}
		return types.NewFloat(r), nil
	}
	scale := math.Pow(10, float64(places))
	r := math.Round(d.ToFloat()*scale) / scale
	if f.Ft.IsInteger() {
		return types.NewFloat(r).ToIntDatum(), nil
	}
	return types.NewFloat(r), nil
}

func evalConcat(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	var buf []byte
	for _, a := range f.Args {
		d, err := a.Eval(ctx, row)
		if err != nil || d.IsNull() {
			return types.Datum{}, err
		}
		b := toStr(d)
		if resultTooLarge(ctx, "concat", int64(len(buf)+len(b))) {
			return types.Datum{}, nil
		}
		buf = append(buf, b...)
	}
	if buf == nil {
		buf = []byte{}
	}
	return types.NewStringBytes(buf), nil
}

func evalConcatWS(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	sep, err := f.Args[0].Eval(ctx, row)
	if err != nil || sep.IsNull() {
		return types.Datum{}, err
	}
	buf := []byte{}
	first := true
	for _, a := range f.Args[1:] {
		d, err := a.Eval(ctx, row)
		if err != nil {
			return d, err
		}
		if d.IsNull() {
			continue
		}
		if !first {
			buf = append(buf, toStr(sep)...)
		}
		first = false
		b := toStr(d)
		if resultTooLarge(ctx, "concat_ws", int64(len(buf)+len(b))) {
			return types.Datum{}, nil
		}
		buf = append(buf, b...)
	}
	return types.NewStringBytes(buf), nil
}

func strFunc1(fn func([]byte) types.Datum) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return d, err
		}
		return fn(toStr(d)), nil
	}
}

func evalSubstring(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	p, err := f.Args[1].Eval(ctx, row)
	if err != nil || p.IsNull() {
		return types.Datum{}, err
	}
	rs := []rune(string(toStr(d)))
	pos, _ := p.ToInt()
	n := int64(len(rs))
	length := n
	if len(f.Args) > 2 {
		l, err := f.Args[2].Eval(ctx, row)
		if err != nil || l.IsNull() {
			return types.Datum{}, err
		}
		length, _ = l.ToInt()
	}
	if pos < 0 {
		pos = n + pos + 1
	}
	if pos < 1 || pos > n || length <= 0 {
		return types.NewString(""), nil
	}
	end := pos - 1 + length
	if end > n {
		end = n
	}
	return types.NewString(string(rs[pos-1 : end])), nil
}

func evalGreatestLeast(greatest bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		var res types.Datum
		for i, a := range f.Args {
			d, err := a.Eval(ctx, row)
			if err != nil || d.IsNull() {
				return types.Datum{}, err
			}
			c := types.Compare(d, res)
			if i == 0 || (greatest && c > 0) || (!greatest && c < 0) {
				res = d
			}
		}
		return ConvertTo(res, &f.Ft), nil
	}
}

func evalSession(get func(s SessionInfo) types.Datum) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		if ctx.Session == nil {
			return types.Datum{}, nil
		}
		return get(ctx.Session), nil
	}
}

// ToIntDatum rounds a float datum to an integer datum.
func init() {
	b1 := func(fn evalFunc, rt func([]Expr) types.FieldType) builtin { return builtin{1, 1, fn, rt, false} }
	b2 := func(fn evalFunc, rt func([]Expr) types.FieldType) builtin { return builtin{2, 2, fn, rt, false} }
	builtins = map[string]builtin{
		"plus":             b2(arith('+'), arithType),
		"minus":            b2(arith('-'), arithType),
		"mul":              b2(arith('*'), mulType),
		"div":              b2(evalDiv, divType),
		"intdiv":           b2(evalIntDiv, intType),
		"mod":              b2(evalMod, modType),
		"eq":               b2(cmpFunc("eq"), boolType),
		"ne":               b2(cmpFunc("ne"), boolType),
		"lt":               b2(cmpFunc("lt"), boolType),
		"le":               b2(cmpFunc("le"), boolType),
		"gt":               b2(cmpFunc("gt"), boolType),
		"ge":               b2(cmpFunc("ge"), boolType),
		"nulleq":           b2(evalNullEQ, boolType),
		"and":              {2, -1, evalAnd, boolType, false},
		"or":               {2, -1, evalOr, boolType, false},
		"xor":              b2(evalXor, boolType),
		"not":              b1(evalNot, boolType),
		"unaryminus":       b1(evalNeg, firstArgTypeSigned),
		"isnull":           b1(evalIsNull, boolType),
		"istrue":           b1(evalIsTrue(true), boolType),
		"isfalse":          b1(evalIsTrue(false), boolType),
		"in":               {2, -1, evalIn, boolType, false},
		"like":             {2, 3, evalLike, boolType, false},
		"case":             {1, -1, evalCaseWhen, caseWhenType, false},
		"case_operand":     {2, -1, evalCaseOperand, caseOperandType, false},
		"if":               {3, 3, evalIf, func(a []Expr) types.FieldType { return unifiedType(a[1:]) }, false},
		"ifnull":           b2(evalCoalesce, unifiedType),
		"coalesce":         {1, -1, evalCoalesce, unifiedType, false},
		"nullif":           b2(evalNullIf, firstArgType),
		"abs":              b1(evalAbs, firstArgTypeSigned),
		"floor":            b1(numFunc1(math.Floor), roundType1),
		"ceil":             b1(numFunc1(math.Ceil), roundType1),
		"ceiling":          b1(numFunc1(math.Ceil), roundType1),
		"sqrt":             b1(numFunc1(math.Sqrt), doubleType),
		"round":            {1, 2, evalRound, roundType, false},
		"truncate":         {2, 2, evalRound, roundType, false},
		"greatest":         {2, -1, evalGreatestLeast(true), unifiedType, false},
		"least":            {2, -1, evalGreatestLeast(false), unifiedType, false},
		"concat":           {1, -1, evalConcat, stringType, false},
		"concat_ws":        {2, -1, evalConcatWS, stringType, false},
		"length":           b1(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len(b))) }), intType),
		"octet_length":     b1(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len(b))) }), intType),
		"char_length":      b1(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len([]rune(string(b))))) }), intType),
		"character_length": b1(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len([]rune(string(b))))) }), intType),
		"upper":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToUpper(string(b))) }), firstArgStringType),
		"ucase":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToUpper(string(b))) }), firstArgStringType),
		"lower":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToLower(string(b))) }), firstArgStringType),
		"lcase":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToLower(string(b))) }), firstArgStringType),
		"trim":             b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.Trim(string(b), " ")) }), firstArgStringType),
		"ltrim":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.TrimLeft(string(b), " ")) }), firstArgStringType),
		"rtrim":            b1(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.TrimRight(string(b), " ")) }), firstArgStringType),
		"substring":        {2, 3, evalSubstring, firstArgStringType, false},
		"substr":           {2, 3, evalSubstring, firstArgStringType, false},
		"database":         {0, 0, evalSession(func(s SessionInfo) types.Datum { return nullIfEmpty(s.CurrentDB()) }), stringType, true},
		"schema":           {0, 0, evalSession(func(s SessionInfo) types.Datum { return nullIfEmpty(s.CurrentDB()) }), stringType, true},
		"user":             {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"current_user":     {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.CurrentUser()) }), stringType, true},
		"session_user":     {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"system_user":      {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"connection_id":    {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewUint(s.ConnectionID()) }), intType, true},
		"last_insert_id":   {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewUint(s.LastInsertID()) }), intType, true},
		"version":          {0, 0, evalSession(func(s SessionInfo) types.Datum { v, _ := s.SysVar("version"); return v }), stringType, true},
	}
}

func nullIfEmpty(s string) types.Datum {
	if s == "" {
		return types.Datum{}
	}
	return types.NewString(s)
}

func firstArgTypeSigned(args []Expr) types.FieldType {
	ft := *args[0].Type()
	ft.Flag &^= mysql.UnsignedFlag | mysql.NotNullFlag | mysql.PriKeyFlag | mysql.AutoIncrementFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag
	if ft.IsString() && ft.Tp != mysql.TypeNewDecimal {
		return doubleType(args)
	}
	if ft.IsInteger() {
		ft.Tp = mysql.TypeLonglong
	}
	return ft
}

func roundType1(args []Expr) types.FieldType {
	ft := args[0].Type()
	if ft.IsInteger() || ft.Tp == mysql.TypeNewDecimal {
		return intType(args)
	}
	return doubleType(args)
}

func firstArgStringType(args []Expr) types.FieldType {
	ft := stringType(args[:1])
	if args[0].Type().IsBinary() {
		ft.Charset, ft.Collate = "binary", "binary"
	}
	return ft
}

func bigOf(d types.Datum) *big.Int {
	if d.Kind() == types.KindUint64 {
		return new(big.Int).SetUint64(d.Uint())
	}
	v, _ := d.ToInt()
	return big.NewInt(v)
}
