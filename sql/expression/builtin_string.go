package expression

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/shoaldb/shoal/types"
)

// String functions. REPEAT, LPAD, RPAD, SPACE, REPLACE and INSERT, whose
// results a client can make huge, live in builtin_string_limits.go.

func init() {
	registerBuiltins("string", map[string]builtin{
		"concat":           {1, -1, evalConcat, stringType, false},
		"concat_ws":        {2, -1, evalConcatWS, stringType, false},
		"length":           oneArg(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len(b))) }), intType),
		"octet_length":     oneArg(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len(b))) }), intType),
		"char_length":      oneArg(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len([]rune(string(b))))) }), intType),
		"character_length": oneArg(strFunc1(func(b []byte) types.Datum { return types.NewInt(int64(len([]rune(string(b))))) }), intType),
		"upper":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToUpper(string(b))) }), firstArgStringType),
		"ucase":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToUpper(string(b))) }), firstArgStringType),
		"lower":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToLower(string(b))) }), firstArgStringType),
		"lcase":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.ToLower(string(b))) }), firstArgStringType),
		"trim":             oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.Trim(string(b), " ")) }), firstArgStringType),
		"ltrim":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.TrimLeft(string(b), " ")) }), firstArgStringType),
		"rtrim":            oneArg(strFunc1(func(b []byte) types.Datum { return types.NewString(strings.TrimRight(string(b), " ")) }), firstArgStringType),
		"substring":        {2, 3, evalSubstring, firstArgStringType, false},
		"substr":           {2, 3, evalSubstring, firstArgStringType, false},
		"insert_func":      {4, 4, evalInsert, firstArgStringType, false},
		"replace":          {3, 3, evalReplace, firstArgStringType, false},
		"instr": {2, 2, strFn(func(a []types.Datum) types.Datum {
			i := strings.Index(string(toStr(a[0])), string(toStr(a[1])))
			if i < 0 {
				return types.NewInt(0)
			}
			return types.NewInt(int64(utf8.RuneCountInString(string(toStr(a[0]))[:i])) + 1)
		}), intType, false},
		"locate": {2, 3, strFn(func(a []types.Datum) types.Datum {
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
		}), intType, false},
		"left": {2, 2, strFn(func(a []types.Datum) types.Datum {
			rs, n := runeSlice(a[0]), int(intArg(a[1]))
			n = max(0, min(n, len(rs)))
			return types.NewString(string(rs[:n]))
		}), firstArgStringType, false},
		"right": {2, 2, strFn(func(a []types.Datum) types.Datum {
			rs, n := runeSlice(a[0]), int(intArg(a[1]))
			n = max(0, min(n, len(rs)))
			return types.NewString(string(rs[len(rs)-n:]))
		}), firstArgStringType, false},
		"repeat": {2, 2, evalRepeat, firstArgStringType, false},
		"reverse": {1, 1, strFn(func(a []types.Datum) types.Datum {
			rs := runeSlice(a[0])
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return types.NewString(string(rs))
		}), firstArgStringType, false},
		"lpad":  {3, 3, evalPad(true), firstArgStringType, false},
		"rpad":  {3, 3, evalPad(false), firstArgStringType, false},
		"space": {1, 1, evalSpace, stringType, false},
		"ascii": {1, 1, strFn(func(a []types.Datum) types.Datum {
			b := toStr(a[0])
			if len(b) == 0 {
				return types.NewInt(0)
			}
			return types.NewInt(int64(b[0]))
		}), intType, false},
		"hex": {1, 1, strFn(func(a []types.Datum) types.Datum {
			if a[0].Kind() == types.KindInt64 || a[0].Kind() == types.KindUint64 {
				return types.NewString(strings.ToUpper(strings.TrimLeft(hex.EncodeToString(u64bytes(uint64(a[0].Int()))), "0")))
			}
			return types.NewString(strings.ToUpper(hex.EncodeToString(toStr(a[0]))))
		}), stringType, false},
		"md5": {1, 1, strFn(func(a []types.Datum) types.Datum {
			sum := md5.Sum(toStr(a[0]))
			return types.NewString(hex.EncodeToString(sum[:]))
		}), stringType, false},
		"strcmp": {2, 2, strFn(func(a []types.Datum) types.Datum {
			return types.NewInt(int64(strings.Compare(string(toStr(a[0])), string(toStr(a[1])))))
		}), intType, false},
	})
}

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

func u64bytes(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}
