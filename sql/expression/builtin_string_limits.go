package expression

import (
	"bytes"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// String functions never build a result larger than max_allowed_packet:
// as in MySQL, such a result is NULL with warning 1301, and the size is
// checked before anything is allocated, so LPAD('a', 1000000000, 'b')
// costs nothing.

// defaultMaxAllowedPacket applies when no session is attached (constant
// folding in tests).
const defaultMaxAllowedPacket = 64 << 20

// maxAllowedPacket is the session's max_allowed_packet.
func maxAllowedPacket(ctx *Context) int64 {
	if ctx != nil && ctx.Session != nil {
		if d, ok := ctx.Session.SysVar("max_allowed_packet"); ok {
			if n, _ := d.ToInt(); n > 0 {
				return n
			}
		}
	}
	return defaultMaxAllowedPacket
}

// resultTooLarge reports whether a result of size bytes of function fn
// would exceed max_allowed_packet, and if so records MySQL's warning.
func resultTooLarge(ctx *Context, fn string, size int64) bool {
	limit := maxAllowedPacket(ctx)
	if size <= limit {
		return false
	}
	ctx.AppendWarning(errno.NewStd(mysql.ErrWarnAllowedPacketOverflowed, fn, limit))
	return true
}

// mbMaxLen is the most bytes one character of f's result takes (MySQL
// sizes LPAD/RPAD by it): 1 for binary strings, 4 for utf8mb4.
func mbMaxLen(f *ScalarFunc) int64 {
	if f.Type().Charset == "binary" {
		return 1
	}
	return 4
}

func evalRepeat(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, null, err := evalStrings(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	s, n := toStr(a[0]), intArg(a[1])
	if n <= 0 || len(s) == 0 {
		return types.NewString(""), nil
	}
	if n > maxAllowedPacket(ctx)/int64(len(s)) {
		resultTooLarge(ctx, "repeat", maxAllowedPacket(ctx)+1)
		return types.Datum{}, nil
	}
	return types.NewStringBytes(bytes.Repeat(s, int(n))), nil
}

func evalPad(left bool) evalFunc {
	name := "rpad"
	if left {
		name = "lpad"
	}
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, null, err := evalStrings(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		n := intArg(a[1])
		if n < 0 {
			return types.Datum{}, nil
		}
		n = min(n, 1<<31-1)
		s := toStr(a[0])
		if chars := int64(utf8.RuneCount(s)); n <= chars {
			return types.NewString(string([]rune(string(s))[:n])), nil
		}
		if resultTooLarge(ctx, name, n*mbMaxLen(f)) {
			return types.Datum{}, nil
		}
		return pad(left)(a), nil
	}
}

func evalSpace(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	n := intArg(d)
	if n <= 0 {
		return types.NewString(""), nil
	}
	if resultTooLarge(ctx, "space", n) {
		return types.Datum{}, nil
	}
	return types.NewStringBytes(bytes.Repeat([]byte{' '}, int(n))), nil
}

func evalReplace(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, null, err := evalStrings(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	s, from, to := toStr(a[0]), toStr(a[1]), toStr(a[2])
	if len(from) == 0 {
		return types.NewStringBytes(s), nil
	}
	if grow := int64(len(to) - len(from)); grow > 0 {
		if resultTooLarge(ctx, "replace", int64(len(s))+int64(bytes.Count(s, from))*grow) {
			return types.Datum{}, nil
		}
	}
	return types.NewStringBytes(bytes.ReplaceAll(s, from, to)), nil
}

// evalInsert is INSERT(str, pos, len, newstr): str with the len characters
// from pos replaced by newstr; str itself when pos is out of range.
func evalInsert(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, null, err := evalStrings(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	rs := []rune(string(toStr(a[0])))
	pos, length, repl := intArg(a[1]), intArg(a[2]), toStr(a[3])
	n := int64(len(rs))
	if pos < 1 || pos > n {
		return types.NewStringBytes(toStr(a[0])), nil
	}
	if length < 0 || length > n-pos+1 {
		length = n - pos + 1
	}
	head, tail := string(rs[:pos-1]), string(rs[pos-1+length:])
	if resultTooLarge(ctx, "insert", int64(len(head)+len(repl)+len(tail))) {
		return types.Datum{}, nil
	}
	out := make([]byte, 0, len(head)+len(repl)+len(tail))
	out = append(append(append(out, head...), repl...), tail...)
	return types.NewStringBytes(out), nil
}
