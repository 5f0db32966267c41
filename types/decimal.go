package types

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// DECIMAL values.
//
// A KindDecimal datum is exact. Representation (the Datum stays 40 bytes and
// the common case allocates nothing):
//
//   - compact: b == nil, i is the unscaled coefficient, x the scale; the
//     value is i / 10^x. Every DECIMAL(p,s) value with p <= 18 is compact,
//     and so are the sums of TPC-C's money columns.
//   - big: b holds the canonical text form ("-1234.50", exactly x fraction
//     digits), used when the coefficient does not fit in an int64.
//
// The scale is part of the value's presentation (1.5 and 1.50 are equal but
// print differently); arithmetic follows MySQL's scale rules, and the
// arbitrary-precision work is done by github.com/cockroachdb/apd.

// MySQL's DECIMAL limits.
const (
	MaxDecimalPrecision = 65
	MaxDecimalScale     = 30
	// DivPrecisionIncrement is MySQL's div_precision_increment default: the
	// scale a division adds to its dividend's.
	DivPrecisionIncrement = 4
)

// ErrDecimalOverflow reports a result with more than 65 digits.
var ErrDecimalOverflow = errors.New("DECIMAL value is out of range")

// ErrBadDecimal reports a string that is not a decimal number.
var ErrBadDecimal = errors.New("incorrect decimal value")

var pow10 = [19]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// decCtx does exact work: enough precision for any MySQL decimal and its
// intermediate products.
var decCtx = apd.Context{Precision: 300, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps &^ apd.Inexact, Rounding: apd.RoundHalfUp}

var decCtxDown = apd.Context{Precision: 120, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps &^ apd.Inexact, Rounding: apd.RoundDown}

// NewDecimalFromCoef returns the decimal coef / 10^scale.
func NewDecimalFromCoef(coef int64, scale int) Datum {
	return Datum{k: KindDecimal, x: uint8(scale), i: coef}
}

// NewDecimalFromInt returns an integer as a decimal of scale 0.
func NewDecimalFromInt(v int64) Datum { return NewDecimalFromCoef(v, 0) }

// NewDecimal returns the datum of an apd decimal. A positive exponent is
// folded into the coefficient (scale 0); a scale above MaxDecimalScale is
// rounded to it.
func NewDecimal(d *apd.Decimal) Datum {
	if d.Form != apd.Finite {
		return NewDecimalFromCoef(0, 0)
	}
	if d.Exponent > 0 {
		var t apd.Decimal
		decCtx.Quantize(&t, d, 0)
		d = &t
	} else if d.Exponent < -MaxDecimalScale {
		var t apd.Decimal
		decCtx.Quantize(&t, d, -MaxDecimalScale)
		d = &t
	}
	scale := int(-d.Exponent)
	if d.Coeff.IsInt64() {
		c := d.Coeff.Int64()
		if d.Negative {
			c = -c
		}
		return NewDecimalFromCoef(c, scale)
	}
	return Datum{k: KindDecimal, x: uint8(scale), b: appendApdText(nil, d)}
}

func appendApdText(buf []byte, d *apd.Decimal) []byte {
	if d.Negative && !d.IsZero() {
		buf = append(buf, '-')
	}
	digits := d.Coeff.Append(nil, 10)
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	return appendScaled(buf, digits, int(-d.Exponent))
}

// appendScaled appends unsigned digits with the decimal point placed scale
// digits from the right.
func appendScaled(buf, digits []byte, scale int) []byte {
	if scale <= 0 {
		return append(buf, digits...)
	}
	if len(digits) <= scale {
		buf = append(buf, '0', '.')
		for i := len(digits); i < scale; i++ {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	n := len(digits) - scale
	buf = append(buf, digits[:n]...)
	buf = append(buf, '.')
	return append(buf, digits[n:]...)
}

// DecimalScale is the scale of a decimal datum.
func (d Datum) DecimalScale() int { return int(d.x) }

// IsCompactDecimal reports whether a decimal datum keeps its coefficient in
// an int64 (see DecimalCoef).
func (d Datum) IsCompactDecimal() bool { return d.k == KindDecimal && d.b == nil }

// DecimalCoef is the unscaled coefficient of a compact decimal.
func (d Datum) DecimalCoef() int64 { return d.i }

// GetDecimal sets dst to the value of a decimal datum.
func (d Datum) GetDecimal(dst *apd.Decimal) {
	if d.b == nil {
		dst.SetFinite(d.i, -int32(d.x))
		return
	}
	if _, _, err := dst.SetString(string(d.b)); err != nil {
		dst.SetFinite(0, 0)
	}
}

// appendDecimal appends the text form of a decimal datum with its own
// scale.
func (d Datum) appendDecimal(buf []byte) []byte {
	if d.b != nil {
		return append(buf, d.b...)
	}
	c := d.i
	var tmp [24]byte
	var digits []byte
	if c < 0 {
		buf = append(buf, '-')
		digits = strconv.AppendUint(tmp[:0], uint64(-c), 10) // -MinInt64 wraps to itself: its uint64 is right
	} else {
		digits = strconv.AppendInt(tmp[:0], c, 10)
	}
	return appendScaled(buf, digits, int(d.x))
}

// AppendDecimalScale appends a decimal datum formatted with exactly scale
// fraction digits (rounding half away from zero or padding with zeros): how
// a DECIMAL(p,scale) result column prints.
func (d Datum) AppendDecimalScale(buf []byte, scale int) []byte {
	if scale < 0 || scale > MaxDecimalScale || scale == int(d.x) {
		return d.appendDecimal(buf)
	}
	r, _ := DecimalRound(d, scale, RoundHalfUp)
	if int(r.x) != scale { // negative scale requests are not for printing
		return r.appendDecimal(buf)
	}
	return r.appendDecimal(buf)
}

// ParseDecimal parses a whole string as a decimal number (spaces around it
// allowed, exponent allowed). The scale is the number of fraction digits
// written (at most MaxDecimalScale; more are rounded).
func ParseDecimal(s string) (Datum, error) {
	d, n, err := parseDecimalPrefix(s)
	if err != nil {
		return d, err
	}
	if strings.TrimSpace(s[n:]) != "" {
		return d, ErrBadDecimal
	}
	return d, nil
}

// ParseDecimalPrefix parses the longest numeric prefix of s as MySQL does
// for a string used as a decimal; ok is false when s was not entirely a
// number (the caller warns) and the value is then that of the prefix (0 for
// none).
func ParseDecimalPrefix(s string) (Datum, bool) {
	d, n, err := parseDecimalPrefix(s)
	if err != nil {
		return NewDecimalFromCoef(0, 0), false
	}
	return d, strings.TrimSpace(s[n:]) == ""
}

func parseDecimalPrefix(s string) (Datum, int, error) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var coef int64
	fits := true
	nd, scale := 0, 0
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if coef > (math.MaxInt64-9)/10 {
			fits = false
		} else {
			coef = coef*10 + int64(s[i]-'0')
		}
		i++
		nd++
	}
	_ = intStart
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if coef > (math.MaxInt64-9)/10 {
				fits = false
			} else {
				coef = coef*10 + int64(s[i]-'0')
			}
			i++
			nd++
			scale++
		}
	}
	if nd == 0 {
		return NewDecimalFromCoef(0, 0), 0, ErrBadDecimal
	}
	end := i
	hasExp := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			hasExp = true
			end = k
		}
	}
	if fits && !hasExp && scale <= MaxDecimalScale {
		if neg {
			coef = -coef
		}
		return NewDecimalFromCoef(coef, scale), end, nil
	}
	var a apd.Decimal
	if _, _, err := decCtx.SetString(&a, s[start:end]); err != nil {
		return NewDecimalFromCoef(0, 0), 0, ErrBadDecimal
	}
	if a.Exponent > 0 {
		decCtx.Quantize(&a, &a, 0)
	}
	if a.NumDigits()+int64(min(a.Exponent, 0)) > MaxDecimalPrecision {
		return NewDecimalFromCoef(0, 0), end, ErrDecimalOverflow
	}
	return NewDecimal(&a), end, nil
}

// DecimalFromFloat converts a double to a decimal through its shortest
// round-tripping text, as MySQL does.
func DecimalFromFloat(f float64) (Datum, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NewDecimalFromCoef(0, 0), ErrDecimalOverflow
	}
	var tmp [64]byte
	s := strconv.AppendFloat(tmp[:0], f, 'f', -1, 64)
	d, _, err := parseDecimalPrefix(string(s))
	return d, err
}

// ToDecimal converts any datum to a decimal with MySQL's rules. ok is false
// when a string was not entirely numeric (the value is its numeric prefix).
func (d Datum) ToDecimal() (Datum, bool) {
	switch d.k {
	case KindDecimal:
		return d, true
	case KindInt64:
		return NewDecimalFromCoef(d.i, 0), true
	case KindUint64:
		if d.i >= 0 {
			return NewDecimalFromCoef(d.i, 0), true
		}
		var a apd.Decimal
		a.Coeff.SetUint64(uint64(d.i))
		return NewDecimal(&a), true
	case KindFloat64:
		r, err := DecimalFromFloat(d.Float())
		return r, err == nil
	case KindString, KindBytes:
		return ParseDecimalPrefix(string(d.b))
	case KindTime, KindDuration:
		var tmp [40]byte
		r, _ := ParseDecimal(string(d.appendNumber(tmp[:0])))
		return r, true
	}
	return NewDecimalFromCoef(0, 0), true
}

func decimalToFloat(d Datum) float64 {
	if d.b == nil {
		c := d.i
		if c > -(1<<53) && c < 1<<53 && d.x <= 22 {
			return float64(c) / float64pow10[d.x]
		}
	}
	var tmp [80]byte
	f, _ := strconv.ParseFloat(string(d.appendDecimal(tmp[:0])), 64)
	return f
}

var float64pow10 = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalToInt rounds half away from zero; ok is false out of int64 range.
func decimalToInt(d Datum) (int64, bool) {
	if d.b == nil {
		if d.x == 0 {
			return d.i, true
		}
		if d.x <= 18 {
			p := pow10[d.x]
			q, r := d.i/p, d.i%p
			if r >= (p+1)/2 {
				q++
			} else if -r >= (p+1)/2 {
				q--
			}
			return q, true
		}
	}
	r, _ := DecimalRound(d, 0, RoundHalfUp)
	if r.b == nil {
		return r.i, true
	}
	var a apd.Decimal
	r.GetDecimal(&a)
	if a.Negative {
		return math.MinInt64, false
	}
	return math.MaxInt64, false
}

// decimalToUint rounds half away from zero; negative values clip to 0 and
// ok is false out of range.
func decimalToUint(d Datum) (uint64, bool) {
	r, _ := DecimalRound(d, 0, RoundHalfUp)
	if r.b == nil {
		if r.i < 0 {
			return 0, false
		}
		return uint64(r.i), true
	}
	var a apd.Decimal
	r.GetDecimal(&a)
	if a.Negative {
		return 0, false
	}
	if a.Coeff.IsUint64() {
		return a.Coeff.Uint64(), true
	}
	return math.MaxUint64, false
}

// DecimalToUint converts a decimal to an unsigned integer (rounding half
// away from zero); ok is false when out of range (clipped).
func DecimalToUint(d Datum) (uint64, bool) { return decimalToUint(d) }

// alignCoef returns c * 10^k; ok is false on overflow.
func alignCoef(c int64, k int) (int64, bool) {
	if k == 0 {
		return c, true
	}
	if k > 18 {
		return 0, c == 0
	}
	p := pow10[k]
	hi, lo := bits.Mul64(uint64(absInt(c)), uint64(p))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if c < 0 {
		return -int64(lo), true
	}
	return int64(lo), true
}

func absInt(c int64) int64 {
	if c < 0 {
		if c == math.MinInt64 {
			return math.MaxInt64 // callers treat it as overflow-prone; only used for magnitude checks
		}
		return -c
	}
	return c
}

// decResult builds a datum from an apd result with the wanted scale,
// checking MySQL's 65-digit limit.
func decResult(a *apd.Decimal, scale int) (Datum, error) {
	if scale > MaxDecimalScale {
		scale = MaxDecimalScale
	}
	if int(-a.Exponent) != scale {
		if _, err := decCtx.Quantize(a, a, -int32(scale)); err != nil {
			return Datum{}, ErrDecimalOverflow
		}
	}
	if a.NumDigits() > MaxDecimalPrecision {
		// More than 65 digits: MySQL keeps the integer digits and drops
		// fraction digits first.
		intDigits := a.NumDigits() + int64(a.Exponent)
		if intDigits > MaxDecimalPrecision {
			return Datum{}, ErrDecimalOverflow
		}
		keep := MaxDecimalPrecision - intDigits
		if _, err := decCtx.Quantize(a, a, -int32(keep)); err != nil {
			return Datum{}, ErrDecimalOverflow
		}
	}
	return NewDecimal(a), nil
}

// DecimalAdd returns a + b with scale max(scale(a), scale(b)). Both must be
// decimals (use ToDecimal first).
func DecimalAdd(a, b Datum) (Datum, error) {
	s := max(a.x, b.x)
	if a.b == nil && b.b == nil {
		x, ok1 := alignCoef(a.i, int(s-a.x))
		y, ok2 := alignCoef(b.i, int(s-b.x))
		if ok1 && ok2 {
			r := x + y
			if !((x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0)) {
				return NewDecimalFromCoef(r, int(s)), nil
			}
		}
	}
	var x, y, r apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	if _, err := decCtx.Add(&r, &x, &y); err != nil {
		return Datum{}, ErrDecimalOverflow
	}
	return decResult(&r, int(s))
}

// DecimalNeg returns -a.
func DecimalNeg(a Datum) Datum {
	if a.b == nil && a.i != math.MinInt64 {
		a.i = -a.i
		return a
	}
	var x apd.Decimal
	a.GetDecimal(&x)
	x.Neg(&x)
	r, _ := decResult(&x, int(a.x))
	return r
}

// DecimalSub returns a - b with scale max(scale(a), scale(b)).
func DecimalSub(a, b Datum) (Datum, error) {
	return DecimalAdd(a, DecimalNeg(b))
}

// DecimalMul returns a * b with scale min(scale(a)+scale(b), 30).
func DecimalMul(a, b Datum) (Datum, error) {
	s := int(a.x) + int(b.x)
	if a.b == nil && b.b == nil && s <= MaxDecimalScale {
		x, y := a.i, b.i
		if x != math.MinInt64 && y != math.MinInt64 {
			hi, lo := bits.Mul64(uint64(absInt(x)), uint64(absInt(y)))
			if hi == 0 && lo <= math.MaxInt64 {
				r := int64(lo)
				if (x < 0) != (y < 0) {
					r = -r
				}
				return NewDecimalFromCoef(r, s), nil
			}
		}
	}
	var x, y, r apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	if _, err := decCtx.Mul(&r, &x, &y); err != nil {
		return Datum{}, ErrDecimalOverflow
	}
	return decResult(&r, min(s, MaxDecimalScale))
}

// DecimalDiv returns a / b rounded half away from zero to scale
// min(scale(a)+incr, 30). divZero reports b == 0 (the result is then NULL
// in SQL).
func DecimalDiv(a, b Datum, incr int) (r Datum, divZero bool, err error) {
	if DecimalSign(b) == 0 {
		return Datum{}, true, nil
	}
	s := min(int(a.x)+incr, MaxDecimalScale)
	var x, y, q apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	// Truncate far beyond the wanted scale, then round once at it: no
	// double rounding.
	if _, err := decCtxDown.Quo(&q, &x, &y); err != nil {
		return Datum{}, false, ErrDecimalOverflow
	}
	r, err = decResult(&q, s)
	return r, false, err
}

// DecimalMod returns a MOD b (the sign follows a) with scale
// max(scale(a), scale(b)); divZero reports b == 0.
func DecimalMod(a, b Datum) (r Datum, divZero bool, err error) {
	if DecimalSign(b) == 0 {
		return Datum{}, true, nil
	}
	s := max(int(a.x), int(b.x))
	if a.b == nil && b.b == nil {
		x, ok1 := alignCoef(a.i, s-int(a.x))
		y, ok2 := alignCoef(b.i, s-int(b.x))
		if ok1 && ok2 && y != -1 {
			return NewDecimalFromCoef(x%y, s), false, nil
		}
	}
	var x, y, q apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	if _, err := decCtx.Rem(&q, &x, &y); err != nil {
		return Datum{}, false, ErrDecimalOverflow
	}
	r, err = decResult(&q, s)
	return r, false, err
}

// DecimalIntDiv returns a DIV b: the quotient truncated toward zero, as an
// integer; ok is false when it does not fit in BIGINT.
func DecimalIntDiv(a, b Datum) (q int64, divZero, ok bool) {
	if DecimalSign(b) == 0 {
		return 0, true, true
	}
	var x, y, r apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	if _, err := decCtx.QuoInteger(&r, &x, &y); err != nil {
		return 0, false, false
	}
	v, err := r.Int64()
	return v, false, err == nil
}

// DecimalSign is -1, 0 or 1.
func DecimalSign(d Datum) int {
	if d.b == nil {
		switch {
		case d.i < 0:
			return -1
		case d.i > 0:
			return 1
		}
		return 0
	}
	if d.b[0] == '-' {
		return -1
	}
	return 1 // big decimals are never zero
}

// DecimalAbs returns |a|.
func DecimalAbs(a Datum) Datum {
	if DecimalSign(a) < 0 {
		return DecimalNeg(a)
	}
	return a
}

// RoundMode selects how DecimalRound drops digits.
type RoundMode uint8

const (
	RoundHalfUp RoundMode = iota // half away from zero (ROUND, storing into DECIMAL)
	RoundTrunc                   // toward zero (TRUNCATE)
	RoundFloor                   // toward -inf (FLOOR)
	RoundCeil                    // toward +inf (CEIL)
)

// DecimalRound rounds a to scale fraction digits. A negative scale rounds
// to tens, hundreds, ... and gives scale 0. A scale above a's pads with
// zeros. changed reports whether digits were dropped (nonzero ones).
func DecimalRound(a Datum, scale int, mode RoundMode) (r Datum, changed bool) {
	scale = min(scale, MaxDecimalScale)
	outScale := max(scale, 0)
	if a.b == nil && scale >= -18 {
		if scale >= int(a.x) {
			c, ok := alignCoef(a.i, outScale-int(a.x))
			if ok {
				return NewDecimalFromCoef(c, outScale), false
			}
		} else if drop := int(a.x) - scale; drop <= 18 {
			p := pow10[drop]
			q, rem := a.i/p, a.i%p
			if rem != 0 {
				switch mode {
				case RoundHalfUp:
					if rem >= (p+1)/2 {
						q++
					} else if -rem >= (p+1)/2 {
						q--
					}
				case RoundFloor:
					if rem < 0 {
						q--
					}
				case RoundCeil:
					if rem > 0 {
						q++
					}
				}
			}
			if scale < 0 {
				if c, ok := alignCoef(q, -scale); ok {
					return NewDecimalFromCoef(c, 0), rem != 0
				}
			} else {
				return NewDecimalFromCoef(q, scale), rem != 0
			}
		}
	}
	var x, y apd.Decimal
	a.GetDecimal(&x)
	c := decCtx
	switch mode {
	case RoundTrunc:
		c.Rounding = apd.RoundDown
	case RoundFloor:
		c.Rounding = apd.RoundFloor
	case RoundCeil:
		c.Rounding = apd.RoundCeiling
	}
	c.Quantize(&y, &x, -int32(scale))
	changed = y.Cmp(&x) != 0
	if scale < 0 {
		c.Quantize(&y, &y, 0)
	}
	return NewDecimal(&y), changed
}

// DecimalFitsPrecision reports whether a (already at scale s) fits
// DECIMAL(p,s): at most p-s integer digits.
func DecimalFitsPrecision(a Datum, p, s int) bool {
	intDigits := p - s
	if a.b == nil {
		if a.x > 18 {
			return intDigits >= 0 // |coefficient| < 10^19: no integer digits
		}
		ip := absInt(a.i) / pow10[a.x]
		if intDigits >= 19 {
			return true
		}
		return ip < pow10[intDigits]
	}
	var x apd.Decimal
	a.GetDecimal(&x)
	return x.NumDigits()+int64(x.Exponent) <= int64(intDigits)
}

// DecimalMaxValue is the largest DECIMAL(p,s) value, negated if neg: the
// value MySQL clips to in non-strict mode.
func DecimalMaxValue(p, s int, neg bool) Datum {
	digits := strings.Repeat("9", p)
	var a apd.Decimal
	a.Coeff.SetString(digits, 10)
	a.Exponent = -int32(s)
	a.Negative = neg
	return NewDecimal(&a)
}

// CompareDecimal orders two decimals exactly.
func CompareDecimal(a, b Datum) int {
	if a.b == nil && b.b == nil {
		if a.x == b.x {
			return cmpInt(a.i, b.i)
		}
		s := max(a.x, b.x)
		x, ok1 := alignCoef(a.i, int(s-a.x))
		y, ok2 := alignCoef(b.i, int(s-b.x))
		if ok1 && ok2 {
			return cmpInt(x, y)
		}
	}
	var x, y apd.Decimal
	a.GetDecimal(&x)
	b.GetDecimal(&y)
	return x.Cmp(&y)
}

// DecimalDigits appends the canonical digits of |a| (no leading or
// trailing zeros; empty for zero) to buf and returns it with the decimal
// exponent e such that |a| = 0.digits × 10^e. Equal values give equal
// results whatever their scales: the key encoding is built on it.
func DecimalDigits(buf []byte, a Datum) ([]byte, int) {
	start := len(buf)
	var tmp [80]byte
	txt := a.appendDecimal(tmp[:0])
	if len(txt) > 0 && txt[0] == '-' {
		txt = txt[1:]
	}
	e := 0
	seenDot, seenNonZero := false, false
	for _, c := range txt {
		if c == '.' {
			seenDot = true
			continue
		}
		if !seenNonZero {
			if c == '0' {
				if seenDot {
					e--
				}
				continue
			}
			seenNonZero = true
		}
		if !seenDot {
			e++
		}
		buf = append(buf, c)
	}
	for len(buf) > start && buf[len(buf)-1] == '0' {
		buf = buf[:len(buf)-1]
	}
	if len(buf) == start {
		return buf, 0
	}
	return buf, e
}

// DecimalFromDigits is the inverse of DecimalDigits: the value
// sign × 0.digits × 10^e, with the smallest scale that holds it.
func DecimalFromDigits(neg bool, digits []byte, e int) Datum {
	if len(digits) == 0 {
		return NewDecimalFromCoef(0, 0)
	}
	scale := max(len(digits)-e, 0)
	if scale <= MaxDecimalScale && len(digits) <= 18 && e <= 18 {
		var c int64
		for _, ch := range digits {
			c = c*10 + int64(ch-'0')
		}
		for i := len(digits); i < e; i++ {
			c *= 10
		}
		if neg {
			c = -c
		}
		return NewDecimalFromCoef(c, scale)
	}
	var a apd.Decimal
	a.Coeff.SetString(string(digits), 10)
	a.Exponent = int32(e - len(digits))
	a.Negative = neg
	return NewDecimal(&a)
}
