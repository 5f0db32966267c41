package types

import (
	"bytes"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types/collate"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// ToFloat converts a datum to float64 with MySQL's rules (strings parse
// their longest numeric prefix; a non-numeric string is 0).
func (d Datum) ToFloat() float64 {
	switch d.k {
	case KindInt64:
		return float64(d.i)
	case KindUint64:
		return float64(uint64(d.i))
	case KindFloat64:
		return d.Float()
	case KindString, KindBytes:
		f, _ := ParseFloatPrefix(string(d.b))
		return f
	case KindDecimal:
		return decimalToFloat(d)
	case KindTime, KindDuration:
		return timeToFloat(d)
	}
	return 0
}

// ToInt converts a datum to int64 with MySQL's rules (floats round half
// away from zero; strings parse their numeric prefix). ok is false on
// overflow.
func (d Datum) ToInt() (int64, bool) {
	switch d.k {
	case KindInt64:
		return d.i, true
	case KindUint64:
		return d.i, uint64(d.i) <= math.MaxInt64
	case KindFloat64:
		f := math.Round(d.Float())
		if f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
			return 0, false
		}
		return int64(f), true
	case KindString, KindBytes:
		s := strings.TrimSpace(string(d.b))
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
		f, _ := ParseFloatPrefix(s)
		return NewFloat(f).ToInt()
	case KindDecimal:
		return decimalToInt(d)
	case KindTime, KindDuration:
		return NewFloat(timeToFloat(d)).ToInt()
	}
	return 0, true
}

// ToBool evaluates a datum as a condition: NULL is unknown (ok=false).
func (d Datum) ToBool() (v bool, ok bool) {
	switch d.k {
	case KindNull:
		return false, false
	case KindInt64, KindUint64:
		return d.i != 0, true
	case KindFloat64:
		return d.Float() != 0, true
	case KindDecimal:
		return DecimalSign(d) != 0, true
	case KindTime:
		return d.i != 0, true
	case KindDuration:
		return d.i != 0, true
	default:
		return d.ToFloat() != 0, true
	}
}

// ParseFloatPrefix parses the longest prefix of s that is a number, as MySQL
// does when a string is used as a number. ok is false if s is not entirely a
// number (MySQL then warns "Truncated incorrect DOUBLE value").
func ParseFloatPrefix(s string) (float64, bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	end := 0
	seenDigit, seenDot, seenE := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
			end = i + 1
		case (c == '+' || c == '-') && (i == 0 || (seenE && (s[i-1] == 'e' || s[i-1] == 'E'))):
		case c == '.' && !seenDot && !seenE:
			seenDot = true
		case (c == 'e' || c == 'E') && seenDigit && !seenE:
			seenE = true
		default:
			i = len(s)
		}
	}
	if end == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, false
	}
	return f, false
}

func isNumeric(k Kind) bool { return k == KindInt64 || k == KindUint64 || k == KindFloat64 }

// Compare orders two non-NULL datums with MySQL's comparison rules: numbers
// numerically (signed and unsigned exactly), strings bytewise (binary
// collation), a string against a number as numbers.
func Compare(a, b Datum) int {
	switch {
	case a.k == KindInt64 && b.k == KindInt64:
		return cmpInt(a.i, b.i)
	case a.k == KindUint64 && b.k == KindUint64:
		return cmpUint(uint64(a.i), uint64(b.i))
	case a.k == KindInt64 && b.k == KindUint64:
		if a.i < 0 {
			return -1
		}
		return cmpUint(uint64(a.i), uint64(b.i))
	case a.k == KindUint64 && b.k == KindInt64:
		if b.i < 0 {
			return 1
		}
		return cmpUint(uint64(a.i), uint64(b.i))
	case (a.k == KindString || a.k == KindBytes) && (b.k == KindString || b.k == KindBytes):
		return bytes.Compare(a.b, b.b)
	case a.k == KindNull || b.k == KindNull:
		return cmpInt(int64(boolInt(a.k != KindNull)), int64(boolInt(b.k != KindNull)))
	case a.k == KindDecimal || b.k == KindDecimal:
		if a.k == KindFloat64 || b.k == KindFloat64 || isStringKind(a.k) || isStringKind(b.k) {
			break // compared as doubles, as MySQL does
		}
		if a.k == KindTime || a.k == KindDuration || b.k == KindTime || b.k == KindDuration {
			break
		}
		x, _ := a.ToDecimal()
		y, _ := b.ToDecimal()
		return CompareDecimal(x, y)
	case a.k == KindTime || b.k == KindTime:
		return compareTime(a, b)
	case a.k == KindDuration || b.k == KindDuration:
		return compareDuration(a, b)
	}
	return cmpFloat(a.ToFloat(), b.ToFloat())
}

func isStringKind(k Kind) bool { return k == KindString || k == KindBytes }

// compareTime compares with at least one side a DATE/DATETIME/TIMESTAMP:
// the other side is converted to a datetime (strings and numbers as MySQL
// reads them); when it is not a valid one, they compare as strings
// (string side) or numbers.
func compareTime(a, b Datum) int {
	if a.k == KindTime && b.k == KindTime {
		if c := cmpUint(uint64(a.i), uint64(b.i)); c != 0 {
			return c
		}
		// The later of two TIMESTAMP instants sharing a local time (see
		// WithFold) sorts after the earlier, which is the one a literal
		// names: TIMESTAMPs compare as instants in MySQL.
		return cmpInt(int64(laterInstant(a)), int64(laterInstant(b)))
	}
	if b.k == KindTime {
		return -compareTime(b, a)
	}
	switch b.k {
	case KindString, KindBytes, KindInt64, KindUint64, KindDecimal, KindFloat64:
		if t, err := b.ToTime(mysql.TypeDatetime, MaxFsp); err == nil {
			if c := cmpUint(uint64(a.i), uint64(t.i)); c != 0 {
				return c
			}
			return laterInstant(a)
		}
		if isStringKind(b.k) {
			var tmp [40]byte
			return bytes.Compare(a.AppendText(tmp[:0]), b.b)
		}
	case KindDuration:
		t, _ := b.ToTime(mysql.TypeDatetime, MaxFsp)
		return cmpUint(uint64(a.i), uint64(t.i))
	}
	return cmpFloat(a.ToFloat(), b.ToFloat())
}

// laterInstant is 1 for a TIMESTAMP datum marked as the later instant of
// an overlap, else 0.
func laterInstant(d Datum) int {
	if d.y == mysql.TypeTimestamp && d.Fold() {
		return 1
	}
	return 0
}

func compareDuration(a, b Datum) int {
	if b.k == KindDuration && a.k != KindDuration {
		return -compareDuration(b, a)
	}
	if b.k == KindDuration {
		return cmpInt(a.i, b.i)
	}
	if isStringKind(b.k) {
		if t, err := ParseDuration(string(b.b), MaxFsp); err == nil {
			return cmpInt(a.i, t.i)
		}
		var tmp [40]byte
		return bytes.Compare(a.AppendText(tmp[:0]), b.b)
	}
	return cmpFloat(a.ToFloat(), b.ToFloat())
}

// CollatorOf returns the collator strings of the collation compare by, or
// nil when they compare bytewise as Compare does: binary,
// utf8mb4_0900_bin, utf8mb4_bin and no collation. utf8mb4_bin stays
// bytewise (trailing spaces count, unlike MySQL's PAD SPACE) so that its
// index keys keep holding the value itself (indexes cover reads; keys
// written before collations existed stay valid).
func CollatorOf(collation string) collate.Collator {
	c := collate.Lookup(collation)
	if c == nil || c.Bytewise() {
		return nil
	}
	return c
}

// HasSortKeys reports a collation whose index keys hold sort keys rather
// than values (such an index cannot cover a read of the column).
func HasSortKeys(collation string) bool { return CollatorOf(collation) != nil }

// CompareCollated compares two strings under c (nil: bytewise); other
// kinds as Compare.
func CompareCollated(a, b Datum, c collate.Collator) int {
	if c != nil && a.k == KindString && b.k == KindString {
		return c.Compare(a.b, b.b)
	}
	return Compare(a, b)
}

// CollationKey returns the datum that keys store for d under the column
// type ft: for a collation with sort keys, the sort key (so values equal
// under the collation have one key and keys sort in collation order);
// otherwise d itself.
func CollationKey(d Datum, ft *FieldType) Datum {
	if d.k != KindString {
		return d
	}
	c := CollatorOf(ft.Collate)
	if c == nil {
		return d
	}
	return NewStringBytes(c.Key(nil, d.b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

// ToIntDatum converts a numeric datum to an integer datum, rounding floats.
func (d Datum) ToIntDatum() Datum {
	if d.k == KindInt64 || d.k == KindUint64 || d.k == KindNull {
		return d
	}
	v, _ := d.ToInt()
	return NewInt(v)
}
