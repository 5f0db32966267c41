package expression

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// evalStrings evaluates all arguments as strings; null reports a NULL one.
func evalStrings(ctx *Context, f *ScalarFunc, row types.Row) (args []types.Datum, null bool, err error) {
	args = make([]types.Datum, len(f.Args))
	for i, a := range f.Args {
		d, err := a.Eval(ctx, row)
		if err != nil || d.IsNull() {
			return nil, true, err
		}
		args[i] = d
	}
	return args, false, nil
}

func intArg(d types.Datum) int64 { v, _ := d.ToInt(); return v }

func strFn(fn func(args []types.Datum) types.Datum) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		args, null, err := evalStrings(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		return fn(args), nil
	}
}

func runeSlice(d types.Datum) []rune { return []rune(string(toStr(d))) }

func pad(left bool) func(args []types.Datum) types.Datum {
	return func(args []types.Datum) types.Datum {
		s := runeSlice(args[0])
		n := int(intArg(args[1]))
		p := runeSlice(args[2])
		if n < 0 {
			return types.Datum{}
		}
		if len(s) >= n {
			return types.NewString(string(s[:n]))
		}
		if len(p) == 0 {
			return types.Datum{}
		}
		var fill []rune
		for len(fill) < n-len(s) {
			fill = append(fill, p...)
		}
		fill = fill[:n-len(s)]
		if left {
			return types.NewString(string(fill) + string(s))
		}
		return types.NewString(string(s) + string(fill))
	}
}

func mathFn(fn func(x float64) (float64, bool)) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return d, err
		}
		r, ok := fn(d.ToFloat())
		if !ok || math.IsNaN(r) || math.IsInf(r, 0) {
			return types.Datum{}, nil
		}
		return types.NewFloat(r), nil
	}
}

func datetimeType(args []Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeDatetime, Flen: 19, Flag: mysql.BinaryFlag, Charset: "binary", Collate: "binary"}
}

func dateType(args []Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeDate, Flen: 10, Flag: mysql.BinaryFlag, Charset: "binary", Collate: "binary"}
}

func init() {
	add := func(name string, minArgs, maxArgs int, fn evalFunc, rt func([]Expr) types.FieldType) {
		builtins[name] = builtin{minArgs, maxArgs, fn, rt, false}
	}
	add("replace", 3, 3, evalReplace, firstArgStringType)
	add("instr", 2, 2, strFn(func(a []types.Datum) types.Datum {
		i := strings.Index(string(toStr(a[0])), string(toStr(a[1])))
		if i < 0 {
			return types.NewInt(0)
		}
		return types.NewInt(int64(utf8.RuneCountInString(string(toStr(a[0]))[:i])) + 1)
	}), intType)
	add("locate", 2, 3, strFn(func(a []types.Datum) types.Datum {
		s, sub := string(toStr(a[1])), string(toStr(a[0]))
		start := 1
		if len(a) > 2 {
			start = int(intArg(a[2]))
		}
		rs := []rune(s)
		if start < 1 || start > len(rs)+1 {
			return types.NewInt(0)
		}
		i := strings.Index(string(rs[start-1:]), sub)
		if i < 0 {
			return types.NewInt(0)
		}
		return types.NewInt(int64(start + utf8.RuneCountInString(string(rs[start-1:])[:i])))
	}), intType)
	add("left", 2, 2, strFn(func(a []types.Datum) types.Datum {
		rs, n := runeSlice(a[0]), int(intArg(a[1]))
		n = max(0, min(n, len(rs)))
		return types.NewString(string(rs[:n]))
	}), firstArgStringType)
	add("right", 2, 2, strFn(func(a []types.Datum) types.Datum {
		rs, n := runeSlice(a[0]), int(intArg(a[1]))
		n = max(0, min(n, len(rs)))
		return types.NewString(string(rs[len(rs)-n:]))
	}), firstArgStringType)
	add("repeat", 2, 2, evalRepeat, firstArgStringType)
	add("reverse", 1, 1, strFn(func(a []types.Datum) types.Datum {
		rs := runeSlice(a[0])
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return types.NewString(string(rs))
	}), firstArgStringType)
	add("lpad", 3, 3, evalPad(true), firstArgStringType)
	add("rpad", 3, 3, evalPad(false), firstArgStringType)
	add("space", 1, 1, evalSpace, stringType)
	add("ascii", 1, 1, strFn(func(a []types.Datum) types.Datum {
		b := toStr(a[0])
		if len(b) == 0 {
			return types.NewInt(0)
		}
		return types.NewInt(int64(b[0]))
	}), intType)
	add("hex", 1, 1, strFn(func(a []types.Datum) types.Datum {
		if a[0].Kind() == types.KindInt64 || a[0].Kind() == types.KindUint64 {
			return types.NewString(strings.ToUpper(strings.TrimLeft(hex.EncodeToString(u64bytes(uint64(a[0].Int()))), "0")))
		}
		return types.NewString(strings.ToUpper(hex.EncodeToString(toStr(a[0]))))
	}), stringType)
	add("md5", 1, 1, strFn(func(a []types.Datum) types.Datum {
		sum := md5.Sum(toStr(a[0]))
		return types.NewString(hex.EncodeToString(sum[:]))
	}), stringType)
	add("strcmp", 2, 2, strFn(func(a []types.Datum) types.Datum {
		return types.NewInt(int64(strings.Compare(string(toStr(a[0])), string(toStr(a[1])))))
	}), intType)
	add("sign", 1, 1, strFn(func(a []types.Datum) types.Datum {
		f := a[0].ToFloat()
		switch {
		case f > 0:
			return types.NewInt(1)
		case f < 0:
			return types.NewInt(-1)
		}
		return types.NewInt(0)
	}), intType)
	add("pow", 2, 2, strFn(func(a []types.Datum) types.Datum { return types.NewFloat(math.Pow(a[0].ToFloat(), a[1].ToFloat())) }), doubleType)
	add("power", 2, 2, strFn(func(a []types.Datum) types.Datum { return types.NewFloat(math.Pow(a[0].ToFloat(), a[1].ToFloat())) }), doubleType)
	add("exp", 1, 1, mathFn(func(x float64) (float64, bool) { return math.Exp(x), true }), doubleType)
	add("ln", 1, 1, mathFn(func(x float64) (float64, bool) { return math.Log(x), x > 0 }), doubleType)
	add("log2", 1, 1, mathFn(func(x float64) (float64, bool) { return math.Log2(x), x > 0 }), doubleType)
	add("log10", 1, 1, mathFn(func(x float64) (float64, bool) { return math.Log10(x), x > 0 }), doubleType)
	add("log", 1, 2, strFn(func(a []types.Datum) types.Datum {
		if len(a) == 1 {
			if x := a[0].ToFloat(); x > 0 {
				return types.NewFloat(math.Log(x))
			}
			return types.Datum{}
		}
		b, x := a[0].ToFloat(), a[1].ToFloat()
		if b <= 0 || b == 1 || x <= 0 {
			return types.Datum{}
		}
		return types.NewFloat(math.Log(x) / math.Log(b))
	}), doubleType)
	add("pi", 0, 0, func(*Context, *ScalarFunc, types.Row) (types.Datum, error) { return types.NewFloat(math.Pi), nil }, doubleType)
	builtins["rand"] = builtin{0, 1, func(*Context, *ScalarFunc, types.Row) (types.Datum, error) {
		return types.NewFloat(rand.Float64()), nil
	}, doubleType, true}
}

func u64bytes(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}
