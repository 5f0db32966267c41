// Package types is the ground floor of shoal's SQL side: the runtime value
// (Datum), the column type (FieldType) and the comparison and conversion
// rules between them. tablecodec and sql both stand on it; it imports
// nothing of shoal's.
//
// Invariants:
//   - A Datum is a small value type; copying it copies the header only. The
//     bytes of a KindString/KindBytes datum may alias a buffer owned by the
//     producer (a decoded row, a network packet); a consumer that keeps the
//     datum beyond the producer's next call must Clone it.
//   - KindNull is the zero value, so a zeroed Datum is SQL NULL.
package types

import (
	"math"
	"strconv"
)

// Kind tells which field of a Datum holds its value.
type Kind uint8

// The datum kinds. Signed and unsigned integers are kept apart because MySQL
// compares BIGINT UNSIGNED values above MaxInt64 correctly.
const (
	KindNull Kind = iota
	KindInt64
	KindUint64
	KindFloat64
	KindString // character data; collation is carried by the column type
	KindBytes  // binary data
	// KindDecimal is an exact DECIMAL (see decimal.go for the layout).
	KindDecimal
	// KindTime is a DATE, DATETIME or TIMESTAMP (see time.go).
	KindTime
	// KindDuration is a TIME (see time.go).
	KindDuration
)

// Datum is one SQL value.
type Datum struct {
	k Kind
	x uint8  // KindDecimal: scale; KindTime, KindDuration: fsp
	y uint8  // KindTime: MySQL type code (TypeDate, TypeDatetime, TypeTimestamp)
	i int64  // KindInt64, KindUint64 (bits), KindFloat64 (bits), KindDecimal (coefficient), KindTime (packed), KindDuration (µs)
	b []byte // KindString, KindBytes, big KindDecimal (text)
}

// Constructors.

func NewNull() Datum                { return Datum{} }
func NewInt(v int64) Datum          { return Datum{k: KindInt64, i: v} }
func NewUint(v uint64) Datum        { return Datum{k: KindUint64, i: int64(v)} }
func NewFloat(v float64) Datum      { return Datum{k: KindFloat64, i: int64(math.Float64bits(v))} }
func NewString(v string) Datum      { return Datum{k: KindString, b: []byte(v)} }
func NewStringBytes(b []byte) Datum { return Datum{k: KindString, b: b} }
func NewBytes(b []byte) Datum       { return Datum{k: KindBytes, b: b} }

func NewBool(v bool) Datum {
	if v {
		return NewInt(1)
	}
	return NewInt(0)
}

// Accessors. Each assumes the matching kind.

func (d Datum) Kind() Kind          { return d.k }
func (d Datum) IsNull() bool        { return d.k == KindNull }
func (d Datum) Int() int64          { return d.i }
func (d Datum) Uint() uint64        { return uint64(d.i) }
func (d Datum) Float() float64      { return math.Float64frombits(uint64(d.i)) }
func (d Datum) Bytes() []byte       { return d.b }
func (d Datum) StringValue() string { return string(d.b) }

// Clone returns a datum that owns its bytes.
func (d Datum) Clone() Datum {
	if d.b != nil {
		d.b = append([]byte(nil), d.b...)
	}
	return d
}

// String renders the datum for logs and tests (not for the wire).
func (d Datum) String() string {
	switch d.k {
	case KindNull:
		return "NULL"
	case KindInt64:
		return strconv.FormatInt(d.i, 10)
	case KindUint64:
		return strconv.FormatUint(uint64(d.i), 10)
	case KindFloat64:
		return strconv.FormatFloat(d.Float(), 'g', -1, 64)
	case KindDecimal, KindTime, KindDuration:
		return string(d.AppendText(nil))
	default:
		return string(d.b)
	}
}

// AppendText appends the MySQL text-protocol form of d to buf. NULL is the
// caller's business (it has no text form).
func (d Datum) AppendText(buf []byte) []byte {
	switch d.k {
	case KindInt64:
		return strconv.AppendInt(buf, d.i, 10)
	case KindUint64:
		return strconv.AppendUint(buf, uint64(d.i), 10)
	case KindFloat64:
		return AppendFloat(buf, d.Float())
	case KindDecimal:
		return d.appendDecimal(buf)
	case KindTime:
		return appendTime(buf, uint64(d.i), d.y, d.Fsp())
	case KindDuration:
		return appendDuration(buf, d.i, int(d.x))
	default:
		return append(buf, d.b...)
	}
}

// AppendFloat formats a DOUBLE as MySQL does in text results: the shortest
// representation that round-trips, with no exponent for moderate magnitudes.
func AppendFloat(buf []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(buf, "NULL"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-15 || abs >= 1e15) {
		return strconv.AppendFloat(buf, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64)
}

// Row is one tuple of datums, in the column order of its producer's schema.
type Row []Datum
