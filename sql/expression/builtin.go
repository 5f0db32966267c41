package expression

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// The builtin registry: every function and operator the planner can bind by
// name, with its arity, evaluation and result type. Each family lives in
// its own file (builtin_arithmetic.go, builtin_compare.go, builtin_op.go,
// builtin_control.go, builtin_like.go, builtin_math.go, builtin_string.go,
// builtin_time.go, builtin_info.go, builtin_misc.go, builtin_cast.go) and
// registers its table from an init function. The package documentation
// (expression.go) says how to add a builtin.

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

// builtin is one registry entry: how many arguments the name takes, how it
// evaluates, how its result type follows from its arguments' types, and
// whether two evaluations over the same row may differ (NOW(), RAND(),
// SLEEP(), session functions): IsConstant never counts such a call as a
// constant.
type builtin struct {
	minArgs, maxArgs int // maxArgs -1: variadic
	fn               evalFunc
	retType          func(args []Expr) types.FieldType
	nondeterministic bool
}

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

// builtins maps a lower-case name to its definition; builtinFamily says
// which family registered it. Both are filled by the families' init
// functions and read-only afterwards.
var (
	builtins      = map[string]builtin{}
	builtinFamily = map[string]string{}
)

// registerBuiltins adds a family's table to the registry.
func registerBuiltins(family string, defs map[string]builtin) {
	for name, b := range defs {
		registerBuiltin(family, name, b)
	}
}

// registerBuiltin adds one definition. A name registered twice is a
// programming error (two families would silently race for it), so it
// panics at package initialisation.
func registerBuiltin(family, name string, b builtin) {
	if name != strings.ToLower(name) {
		panic(fmt.Sprintf("expression: builtin %q must be registered in lower case", name))
	}
	if other, dup := builtinFamily[name]; dup {
		panic(fmt.Sprintf("expression: builtin %q registered by both %s and %s", name, other, family))
	}
	builtins[name] = b
	builtinFamily[name] = family
}

// oneArg and twoArgs define deterministic builtins of exactly one or two
// arguments, the common shapes in the families' tables.
func oneArg(fn evalFunc, rt func([]Expr) types.FieldType) builtin {
	return builtin{1, 1, fn, rt, false}
}

func twoArgs(fn evalFunc, rt func([]Expr) types.FieldType) builtin {
	return builtin{2, 2, fn, rt, false}
}

// Result type helpers shared by the families.

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

func firstArgStringType(args []Expr) types.FieldType {
	ft := stringType(args[:1])
	if args[0].Type().IsBinary() {
		ft.Charset, ft.Collate = "binary", "binary"
	}
	return ft
}

// Argument helpers shared by the families.

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

func toStr(d types.Datum) []byte {
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		return d.Bytes()
	}
	return d.AppendText(nil)
}
