package executor

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/sqlmode"
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
	case mysql.TypeBit:
		// BIT(n) holds n bits.
		if ft.Flen > 0 && ft.Flen < 64 {
			return 0, 1<<ft.Flen - 1
		}
		return 0, math.MaxUint64
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
// the 1-based row number for messages. While an ALTER narrowing c checks
// the rows (c.Pending), a value the narrower type would not hold as it is
// is refused, whatever the SQL mode.
func CastToColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	v, err := castToColumn(ctx, d, c, row)
	if err != nil || c.Pending == nil || v.IsNull() {
		return v, err
	}
	return v, FitsPending(v, c, row)
}

// FitsPending fails when v, a value of column c, would not be stored
// unchanged under c.Pending (with the error an INSERT in strict mode would
// give).
func FitsPending(v types.Datum, c *catalog.ColumnInfo, row int) error {
	pc := *c
	pc.Type, pc.Pending = *c.Pending, nil
	pctx := &Context{Eval: &expression.Context{}, StrictMode: true}
	_, err := castToColumn(pctx, v, &pc, row)
	return err
}

func castToColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	if d.IsNull() {
		return d, nil
	}
	ft := &c.Type
	strict := ctx.StrictMode
	outOfRange := func() *errno.SQLError {
		if ft.Tp == mysql.TypeBit {
			return errno.NewStd(mysql.ErrDataTooLong, c.Name, row)
		}
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
		case types.KindDecimal:
			r, _ := types.DecimalRound(d, 0, types.RoundHalfUp)
			if r.IsCompactDecimal() {
				return CastToColumn(ctx, types.NewInt(r.DecimalCoef()), c, row)
			}
			if u, ok := types.DecimalToUint(r); ok {
				return CastToColumn(ctx, types.NewUint(u), c, row)
			}
			return CastToColumn(ctx, types.NewFloat(r.ToFloat()), c, row)
		case types.KindTime, types.KindDuration:
			v, _ := d.ToInt()
			return CastToColumn(ctx, types.NewInt(v), c, row)
		case types.KindFloat64:
			f := math.Round(d.Float())
			if math.IsNaN(f) {
				// A binary-protocol DOUBLE can carry NaN, which no column holds.
				if err := castFail(ctx, strict, outOfRange()); err != nil {
					return d, err
				}
				return intDatum(ft, 0, 0, false), nil
			}
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
		if ft.Tp == mysql.TypeYear && uv != 0 {
			// Two-digit years, as MySQL reads numbers: 1-69 are 2001-2069,
			// 70-99 are 1970-1999; 100-1900 is out of YEAR's range.
			switch {
			case uv < 70:
				uv += 2000
			case uv < 100:
				uv += 1900
			case uv <= 1900:
				if err := castFail(ctx, strict, outOfRange()); err != nil {
					return d, err
				}
				uv = 0
			}
			iv = int64(uv)
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
			return floatColumnValue(ctx, f, c, row)
		}
		return floatColumnValue(ctx, d.ToFloat(), c, row)
	case ft.Tp == mysql.TypeNewDecimal:
		return castDecimalColumn(ctx, d, c, row)
	case ft.IsTime():
		return castTimeColumn(ctx, d, c, row)
	case ft.Tp == mysql.TypeEnum:
		return castEnumColumn(ctx, d, c, row)
	case ft.Tp == mysql.TypeSet:
		return castSetColumn(ctx, d, c, row)
	case ft.Tp == mysql.TypeJSON:
		return castJSONColumn(d, c)
	case ft.Tp == mysql.TypeDuration:
		fsp := max(ft.Decimal, 0)
		v, err := d.ToDuration(ctx.readFsp(fsp))
		if err == nil && ctx.truncatesFraction() {
			v = truncateDuration(v, fsp)
		}
		if err == nil && d.Kind() == types.KindDuration {
			// A TIME datum is range-checked here too, however it was made
			// (a binary-protocol parameter, an expression): the row codec
			// and every reader assume ±838:59:59.
			v, err = types.ClipDuration(v.DurationMicros(), max(ft.Decimal, 0))
		}
		if err != nil {
			if err := castFail(ctx, strict, errno.New(mysql.ErrTruncatedWrongValue,
				"Incorrect time value: '%s' for column '%s' at row %d", d.String(), c.Name, row)); err != nil {
				return d, err
			}
			if err != types.ErrDurationRange {
				v = types.NewDuration(0, max(ft.Decimal, 0))
			}
		}
		return v, nil
	default:
		kind := tablecodec.DatumKindOf(ft)
		var b []byte
		switch d.Kind() {
		case types.KindString, types.KindBytes:
			b = d.Bytes()
		default:
			b = d.AppendText(nil)
		}
		if kind == types.KindString {
			var err error
			if b, err = checkUTF8(ctx, b, c, row); err != nil {
				return d, err
			}
		}
		if ft.Flen > 0 && isCharType(ft) {
			n := utf8.RuneCount(b)
			if kind == types.KindBytes {
				n = len(b)
			}
			if n > ft.Flen {
				if strict {
					return d, errno.New(mysql.ErrDataTooLong, "Data too long for column '%s' at row %d", c.Name, row)
				}
				ctx.Eval.AppendWarning(errno.New(mysql.WarnDataTruncated, "Data truncated for column '%s' at row %d", c.Name, row))
				b = truncateChars(b, ft.Flen, kind == types.KindBytes)
			}
		}
		if ft.Tp == mysql.TypeString {
			if kind == types.KindBytes {
				// BINARY(n) pads with 0x00 to its length.
				if len(b) < ft.Flen {
					nb := make([]byte, ft.Flen)
					copy(nb, b)
					b = nb
				}
			} else {
				// CHAR(n) reads back without trailing spaces (stored padded
				// in MySQL, stripped on retrieval).
				b = bytes.TrimRight(b, " ")
			}
		}
		if kind == types.KindBytes {
			return types.NewBytes(b), nil
		}
		return types.NewStringBytes(b), nil
	}
}

// floatColumnValue stores f into a FLOAT or DOUBLE column as MySQL's
// Field_real does: NaN, infinities and values beyond the type's range (and
// negatives in an UNSIGNED one) are error 1264 in strict mode, otherwise a
// warning and 0 or the nearest limit. (A binary-protocol DOUBLE can carry
// NaN or Inf, and a DOUBLE beyond FLOAT's range would become Inf.)
func floatColumnValue(ctx *Context, f float64, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	ft := &c.Type
	limit := math.MaxFloat64
	if ft.Tp == mysql.TypeFloat {
		limit = math.MaxFloat32
	}
	clipped := f
	switch {
	case math.IsNaN(f):
		clipped = 0
	case ft.IsUnsigned() && f < 0:
		clipped = 0
	case f > limit:
		clipped = limit
	case f < -limit:
		clipped = -limit
	}
	if clipped != f || math.IsNaN(f) {
		if err := castFail(ctx, ctx.StrictMode, errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, row)); err != nil {
			return types.Datum{}, err
		}
		f = clipped
	}
	if ft.Tp == mysql.TypeFloat {
		f = float64(float32(f))
	}
	return types.NewFloat(f), nil
}

// castDecimalColumn stores d into DECIMAL(p,s): rounded half away from
// zero to s digits; more than p-s integer digits is error 1264 (strict) or
// clipped to the type's extreme; a non-numeric string is error 1366.
func castDecimalColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	ft := &c.Type
	strict := ctx.StrictMode
	var v types.Datum
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		var ok bool
		v, ok = types.ParseDecimalPrefix(d.StringValue())
		if !ok {
			if err := castFail(ctx, strict, errno.New(mysql.ErrTruncatedWrongValueForField,
				"Incorrect decimal value: '%s' for column '%s' at row %d", d.StringValue(), c.Name, row)); err != nil {
				return d, err
			}
		}
	case types.KindFloat64:
		var err error
		if v, err = types.DecimalFromFloat(d.Float()); err != nil {
			if err := castFail(ctx, strict, errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, row)); err != nil {
				return d, err
			}
			return types.DecimalMaxValue(decimalPrecision(ft), decimalScale(ft), d.Float() < 0), nil
		}
	default:
		v, _ = d.ToDecimal()
	}
	p, sc := decimalPrecision(ft), decimalScale(ft)
	r, _ := types.DecimalRound(v, sc, types.RoundHalfUp)
	if !types.DecimalFitsPrecision(r, p, sc) || (ft.IsUnsigned() && types.DecimalSign(r) < 0) {
		if err := castFail(ctx, strict, errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, row)); err != nil {
			return d, err
		}
		if ft.IsUnsigned() && types.DecimalSign(r) < 0 {
			return types.NewDecimalFromCoef(0, sc), nil
		}
		return types.DecimalMaxValue(p, sc, types.DecimalSign(r) < 0), nil
	}
	return r, nil
}

// decimalPrecision and decimalScale are a DECIMAL column's (p,s), with
// MySQL's defaults (DECIMAL = DECIMAL(10,0)).
func decimalPrecision(ft *types.FieldType) int {
	if ft.Flen <= 0 {
		return 10
	}
	return min(ft.Flen, types.MaxDecimalPrecision)
}

func decimalScale(ft *types.FieldType) int {
	if ft.Decimal <= 0 {
		return 0
	}
	return min(ft.Decimal, types.MaxDecimalScale)
}

// castTimeColumn stores d into a DATE/DATETIME/TIMESTAMP column: invalid
// values, and zero dates or zero parts under NO_ZERO_DATE or
// NO_ZERO_IN_DATE, are error 1292 in strict mode; otherwise a warning
// (1264 for zero dates and parts) and the zero value. Without those modes
// zero dates and parts are stored.
func castTimeColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	ft := &c.Type
	fsp := max(ft.Decimal, 0)
	what := "datetime"
	if ft.Tp == mysql.TypeDate || ft.Tp == mysql.TypeNewDate {
		what = "date"
	}
	incorrect := func() *errno.SQLError {
		return errno.New(mysql.ErrTruncatedWrongValue, "Incorrect %s value: '%s' for column '%s' at row %d", what, d.String(), c.Name, row)
	}
	v, err := d.ToTime(ft.Tp, ctx.readFsp(fsp))
	if err == nil && d.Kind() == types.KindTime && !d.TimeFields().Valid() {
		// A DATETIME datum with impossible fields (month 13, hour 25),
		// however it was made, is refused like the literal would be.
		err = types.ErrIncorrectTime
	}
	if err == nil && ctx.truncatesFraction() {
		v = truncateTime(v, ft.Tp, fsp)
	}
	if err != nil {
		if err := castFail(ctx, ctx.StrictMode, incorrect()); err != nil {
			return d, err
		}
		return types.NewTime(types.TimeFields{}, ft.Tp, fsp), nil
	}
	f := v.TimeFields()
	if f.IsZeroDate() && ctx.SQLMode.Has(sqlmode.NoZeroDate) || f.HasZeroInDate() && ctx.SQLMode.Has(sqlmode.NoZeroInDate) {
		if ctx.StrictMode {
			return d, incorrect()
		}
		// MySQL's warning for both is out of range (MariaDB's for a zero
		// part is 1265).
		ctx.Eval.AppendWarning(errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, row))
		return types.NewTime(types.TimeFields{}, ft.Tp, fsp), nil
	}
	if ft.Tp == mysql.TypeTimestamp {
		return castTimestamp(ctx, d, v, c, row, incorrect)
	}
	return v, nil
}

// isCurrentTimestamp reports a CURRENT_TIMESTAMP default (NOW() and the
// (fsp) forms included).
func isCurrentTimestamp(s string) bool {
	u := strings.ToUpper(strings.TrimSpace(s))
	for _, p := range []string{"CURRENT_TIMESTAMP", "NOW(", "LOCALTIMESTAMP", "LOCALTIME"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
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
	if ft.IsUnsigned() || ft.Tp == mysql.TypeBit {
		return types.NewUint(uv)
	}
	return types.NewInt(iv)
}

// DefaultValue returns the value of column c when an INSERT gives none, or
// an error when it has no default and is NOT NULL (strict mode).
func DefaultValue(ctx *Context, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	if c.DefaultIsExpr {
		// Writers evaluate expression defaults over their row
		// (planner.TableExprs); nothing else may take this text for a
		// literal.
		return types.Datum{}, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support an expression default of column '%s' here", c.Name)
	}
	if c.Default != nil {
		if (c.Type.IsTime() || c.Type.Tp == mysql.TypeDuration) && isCurrentTimestamp(*c.Default) {
			// NOW() at the column's precision is truncated, not rounded
			// (so the default never lies after a later NOW()).
			return CastToColumn(ctx, ctx.Eval.NowDatum(min(max(c.Type.Decimal, 0), types.MaxFsp)), c, row)
		}
		return CastToColumn(ctx, types.NewString(*c.Default), c, row)
	}
	if c.HasDefault || !c.Type.NotNull() && !c.NoDefault || c.AutoIncrement {
		return types.Datum{}, nil
	}
	err := errno.New(mysql.ErrNoDefaultForField, "Field '%s' doesn't have a default value", c.Name)
	if ctx.StrictMode {
		return types.Datum{}, err
	}
	ctx.Eval.AppendWarning(err)
	if !c.Type.NotNull() {
		return types.Datum{}, nil
	}
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
	case types.KindDecimal:
		return types.NewDecimalFromCoef(0, decimalScale(&c.Type))
	case types.KindTime:
		return types.NewTime(types.TimeFields{}, c.Type.Tp, max(c.Type.Decimal, 0))
	case types.KindDuration:
		return types.NewDuration(0, max(c.Type.Decimal, 0))
	}
	return types.NewString("")
}

// keyDatum converts a lookup value to the kind stored for column ft, for key
// encoding. ok is false when no stored value can equal v (for example 1.5
// against an integer column); adjust tells how a range bound must move:
// for a non-integral float against an integer column the bound is rounded
// toward the inside of the range by the caller.
func keyDatum(v types.Datum, ft *types.FieldType) (d types.Datum, exact bool, ok bool) {
	d, exact, ok = keyDatumRaw(v, ft)
	if ok {
		d = types.CollationKey(d, ft)
	}
	return d, exact, ok
}

// keyDatumRaw converts without collation folding (see keyDatum).
func keyDatumRaw(v types.Datum, ft *types.FieldType) (d types.Datum, exact bool, ok bool) {
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
	case types.KindDecimal:
		var dv types.Datum
		switch v.Kind() {
		case types.KindString, types.KindBytes:
			dv, _ = types.ParseDecimalPrefix(v.StringValue())
		case types.KindFloat64:
			var err error
			if dv, err = types.DecimalFromFloat(v.Float()); err != nil {
				return v, false, false
			}
		default:
			dv, _ = v.ToDecimal()
		}
		// Stored values have the column's scale: a value with more digits
		// equals none of them, and as a range bound it is rounded toward
		// the inside by the caller (exact=false).
		r, changed := types.DecimalRound(dv, decimalScale(ft), types.RoundTrunc)
		return r, !changed, true
	case types.KindTime:
		var t types.Datum
		var err error
		if v.Kind() == types.KindTime {
			t = v
		} else {
			t, err = v.ToTime(mysql.TypeDatetime, types.MaxFsp)
			if err != nil {
				return v, false, false
			}
		}
		// A stored DATE has no time part, a DATETIME(fsp) no digits past fsp.
		p := t.TimePacked()
		var mask uint64
		switch {
		case ft.Tp == mysql.TypeDate || ft.Tp == mysql.TypeNewDate:
			mask = 1<<37 - 1
		default:
			f := t.TimeFields()
			if fsp := max(ft.Decimal, 0); fsp < types.MaxFsp {
				q := int([]int{1000000, 100000, 10000, 1000, 100, 10}[fsp])
				if f.Micro%q != 0 {
					f.Micro -= f.Micro % q
					return types.NewTimeFromPacked(f.Pack(), ft.Tp, max(ft.Decimal, 0)), false, true
				}
			}
		}
		if p&mask != 0 {
			return types.NewTimeFromPacked(p&^mask, ft.Tp, 0), false, true
		}
		return types.NewTimeFromPacked(p, ft.Tp, max(ft.Decimal, 0)), true, true
	case types.KindDuration:
		t, err := v.ToDuration(types.MaxFsp)
		if err != nil {
			return v, false, false
		}
		return t, true, true
	default:
		if v.Kind() == types.KindString || v.Kind() == types.KindBytes {
			return types.NewStringBytes(v.Bytes()), true, true
		}
		return types.NewStringBytes(v.AppendText(nil)), true, true
	}
}
