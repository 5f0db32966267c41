package executor

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// intRange is the value range of an integer column type.
func intRange(ft *types.FieldType) (lo int64, hi uint64) {
	unsigned := ft.IsUnsigned()
	bits := 64
	switch ft.Tp {
	case mysql.TypeTiny:
		bits = 8
	case mysql.TypeShort:
		bits = 16
	case mysql.TypeInt24:
		bits = 24
	case mysql.TypeLong:
		bits = 32
	case mysql.TypeYear:
		return 0, 2155
	}
	if unsigned {
		if bits == 64 {
			return 0, math.MaxUint64
		}
		return 0, 1<<bits - 1
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// castError is returned (strict mode) or recorded as a warning.
func castFail(ctx *Context, strict bool, err *errno.SQLError) error {
	if strict {
		return err
	}
	ctx.Eval.AppendWarning(err)
	return nil
}

// CastToColumn converts d to the storage kind and range of column c, with
// MySQL's errors (strict mode) or warnings and clipping (otherwise). row is
// the 1-based row number for messages.
func CastToColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	if d.IsNull() {
		return d, nil
	}
	ft := &c.Type
	strict := ctx.StrictMode
	outOfRange := func() *errno.SQLError {
		return errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, row)
	}
	switch {
	case ft.IsInteger():
		lo, hi := intRange(ft)
		var iv int64
		var uv uint64
		neg := false
		switch d.Kind() {
		case types.KindInt64:
			iv = d.Int()
			neg = iv < 0
			uv = uint64(iv)
		case types.KindUint64:
			uv = d.Uint()
			iv = int64(uv)
		case types.KindFloat64:
			f := math.Round(d.Float())
			if f < float64(lo) || f > float64(hi) {
				if err := castFail(ctx, strict, outOfRange()); err != nil {
					return d, err
				}
				if f < float64(lo) {
					return intDatum(ft, lo, uint64(lo), true), nil
				}
				return intDatum(ft, int64(hi), hi, false), nil
			}
			if f < 0 {
				iv, neg = int64(f), true
				uv = uint64(iv)
			} else {
				uv = uint64(f)
				iv = int64(uv)
			}
		default:
			s := strings.TrimSpace(d.StringValue())
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return CastToColumn(ctx, types.NewInt(i), c, row)
			}
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return CastToColumn(ctx, types.NewUint(u), c, row)
			}
			f, ok := types.ParseFloatPrefix(s)
			if !ok {
				if err := castFail(ctx, strict, errno.New(mysql.ErrTruncatedWrongValueForField,
					"Incorrect integer value: '%s' for column '%s' at row %d", d.StringValue(), c.Name, row)); err != nil {
					return d, err
				}
			}
			return CastToColumn(ctx, types.NewFloat(f), c, row)
		}
		if neg {
			if lo == 0 || iv < lo {
				if err := castFail(ctx, strict, outOfRange()); err != nil {
					return d, err
				}
				return intDatum(ft, lo, uint64(lo), true), nil
			}
		} else if uv > hi {
			if err := castFail(ctx, strict, outOfRange()); err != nil {
				return d, err
			}
			return intDatum(ft, int64(hi), hi, false), nil
		}
		return intDatum(ft, iv, uv, neg), nil
	case ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeDouble:
		if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
			f, ok := types.ParseFloatPrefix(strings.TrimSpace(d.StringValue()))
			if !ok {
				if err := castFail(ctx, strict, errno.New(mysql.ErrTruncatedWrongValueForField,
					"Incorrect double value: '%s' for column '%s' at row %d", d.StringValue(), c.Name, row)); err != nil {
					return d, err
				}
			}
			return types.NewFloat(f), nil
		}
		f := d.ToFloat()
		if ft.Tp == mysql.TypeFloat {
			f = float64(float32(f))
		}
		return types.NewFloat(f), nil
	case ft.Tp == mysql.TypeNewDecimal:
		var f float64
		if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
			var ok bool
			f, ok = types.ParseFloatPrefix(strings.TrimSpace(d.StringValue()))
			if !ok {
				if err := castFail(ctx, strict, errno.New(mysql.ErrTruncatedWrongValueForField,
					"Incorrect decimal value: '%s' for column '%s' at row %d", d.StringValue(), c.Name, row)); err != nil {
					return d, err
				}
			}
		} else {
			f = d.ToFloat()
		}
		dec := max(ft.Decimal, 0)
		limit := math.Pow(10, float64(ft.Flen-dec))
		if ft.Flen > 0 && math.Abs(f) >= limit {
			if err := castFail(ctx, strict, outOfRange()); err != nil {
				return d, err
			}
			f = math.Copysign(limit-math.Pow(10, -float64(dec)), f)
		}
		return types.NewString(strconv.FormatFloat(f, 'f', dec, 64)), nil
	default:
		kind := tablecodec.DatumKindOf(ft)
		var b []byte
		switch d.Kind() {
		case types.KindString, types.KindBytes:
			b = d.Bytes()
		default:
			b = d.AppendText(nil)
		}
		if ft.Flen > 0 && isCharType(ft) {
			n := utf8.RuneCount(b)
			if kind == types.KindBytes {
				n = len(b)
			}
			if n > ft.Flen {
				if err := castFail(ctx, strict, errno.New(mysql.ErrDataTooLong, "Data too long for column '%s' at row %d", c.Name, row)); err != nil {
					return d, err
				}
				b = truncateChars(b, ft.Flen, kind == types.KindBytes)
			}
		}
		if kind == types.KindBytes {
			return types.NewBytes(b), nil
		}
		return types.NewStringBytes(b), nil
	}
}

func isCharType(ft *types.FieldType) bool {
	switch ft.Tp {
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString:
		return true
	}
	return false
}

func truncateChars(b []byte, n int, binary bool) []byte {
	if binary {
		return b[:n]
	}
	i := 0
	for j := 0; j < n && i < len(b); j++ {
		_, sz := utf8.DecodeRune(b[i:])
		i += sz
	}
	return b[:i]
}

func intDatum(ft *types.FieldType, iv int64, uv uint64, neg bool) types.Datum {
	if ft.IsUnsigned() {
		return types.NewUint(uv)
	}
	return types.NewInt(iv)
}

// DefaultValue returns the value of column c when an INSERT gives none, or
// an error when it has no default and is NOT NULL (strict mode).
func DefaultValue(ctx *Context, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	if c.Default != nil {
		return CastToColumn(ctx, types.NewString(*c.Default), c, row)
	}
	if c.HasDefault || !c.Type.NotNull() || c.AutoIncrement {
		return types.Datum{}, nil
	}
	err := errno.New(mysql.ErrNoDefaultForField, "Field '%s' doesn't have a default value", c.Name)
	if ctx.StrictMode {
		return types.Datum{}, err
	}
	ctx.Eval.AppendWarning(err)
	return zeroValue(c), nil
}

func zeroValue(c *catalog.ColumnInfo) types.Datum {
	switch tablecodec.DatumKindOf(&c.Type) {
	case types.KindInt64:
		return types.NewInt(0)
	case types.KindUint64:
		return types.NewUint(0)
	case types.KindFloat64:
		return types.NewFloat(0)
	case types.KindBytes:
		return types.NewBytes([]byte{})
	}
	if c.Type.Tp == mysql.TypeNewDecimal {
		return types.NewString("0")
	}
	return types.NewString("")
}

// keyDatum converts a lookup value to the kind stored for column ft, for key
// encoding. ok is false when no stored value can equal v (for example 1.5
// against an integer column); adjust tells how a range bound must move:
// for a non-integral float against an integer column the bound is rounded
// toward the inside of the range by the caller.
func keyDatum(v types.Datum, ft *types.FieldType) (d types.Datum, exact bool, ok bool) {
	if v.IsNull() {
		return v, true, false
	}
	switch tablecodec.DatumKindOf(ft) {
	case types.KindInt64, types.KindUint64:
		var f float64
		switch v.Kind() {
		case types.KindInt64:
			if ft.IsUnsigned() {
				if v.Int() < 0 {
					return types.NewUint(0), false, true
				}
				return types.NewUint(uint64(v.Int())), true, true
			}
			return v, true, true
		case types.KindUint64:
			if !ft.IsUnsigned() {
				if v.Uint() > math.MaxInt64 {
					return types.NewInt(math.MaxInt64), false, true
				}
				return types.NewInt(int64(v.Uint())), true, true
			}
			return v, true, true
		case types.KindFloat64:
			f = v.Float()
		default:
			s := strings.TrimSpace(v.StringValue())
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return keyDatum(types.NewInt(i), ft)
			}
			f, _ = types.ParseFloatPrefix(s)
		}
		r := math.Round(f)
		exact = r == f
		if r >= 9.2e18 {
			r = 9.2e18
		} else if r <= -9.2e18 {
			r = -9.2e18
		}
		if ft.IsUnsigned() {
			if r < 0 {
				return types.NewUint(0), false, true
			}
			return types.NewUint(uint64(r)), exact, true
		}
		return types.NewInt(int64(r)), exact, true
	case types.KindFloat64:
		return types.NewFloat(v.ToFloat()), true, true
	case types.KindBytes:
		if v.Kind() == types.KindString || v.Kind() == types.KindBytes {
			return types.NewBytes(v.Bytes()), true, true
		}
		return types.NewBytes(v.AppendText(nil)), true, true
	default:
		if ft.Tp == mysql.TypeNewDecimal {
			return v, false, false
		}
		if v.Kind() == types.KindString || v.Kind() == types.KindBytes {
			return types.NewStringBytes(v.Bytes()), true, true
		}
		return types.NewStringBytes(v.AppendText(nil)), true, true
	}
}

var _ = expression.Expr(nil)
