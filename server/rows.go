package server

import (
	"math"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

// appendTextRow appends a text-protocol row payload: every value as a
// length-encoded string, NULL as 0xfb.
func appendTextRow(b []byte, fields []*session.Field, row types.Row) []byte {
	for i := range row {
		d := &row[i]
		switch d.Kind() {
		case types.KindNull:
			b = append(b, 0xfb)
		case types.KindString, types.KindBytes:
			b = appendLenEncBytes(b, d.Bytes())
		case types.KindFloat64:
			// Numbers are far shorter than 251 bytes, so their length
			// prefix is one byte, patched after formatting in place.
			pos := len(b)
			b = append(b, 0)
			if i < len(fields) && fields[i].Type.Tp == mysql.TypeFloat {
				b = appendFloat32(b, float32(d.Float()))
			} else {
				b = types.AppendFloat(b, d.Float())
			}
			b[pos] = byte(len(b) - pos - 1)
		default:
			pos := len(b)
			b = append(b, 0)
			b = d.AppendText(b)
			b[pos] = byte(len(b) - pos - 1)
		}
	}
	return b
}

// appendFloat32 formats a FLOAT for the text protocol as MySQL does.
func appendFloat32(b []byte, f float32) []byte {
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return append(b, "NULL"...)
	}
	// MySQL prints FLOAT with FLT_DIG (6) significant digits: 1234567.89
	// reads back as 1234570.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', 6, 32), 64)
	abs := math.Abs(r)
	if abs != 0 && (abs < 1e-15 || abs >= 1e15) {
		return strconv.AppendFloat(b, r, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, r, 'f', -1, 64)
}

// appendBinaryRow appends a binary-protocol row payload: 0x00, the NULL
// bitmap (bit offset 2) and each non-NULL value encoded per its column type.
func appendBinaryRow(b []byte, fields []*session.Field, row types.Row) []byte {
	b = append(b, 0)
	bm := len(b)
	for range (len(row) + 9) / 8 {
		b = append(b, 0)
	}
	for i := range row {
		d := &row[i]
		tp := mysql.TypeVarString
		if i < len(fields) {
			tp = fields[i].Type.Tp
		}
		if d.IsNull() || tp == mysql.TypeNull {
			b[bm+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		b = appendBinaryValue(b, tp, d)
	}
	return b
}

func appendBinaryValue(b []byte, tp byte, d *types.Datum) []byte {
	switch tp {
	case mysql.TypeTiny:
		return append(b, byte(datumInt(d)))
	case mysql.TypeShort, mysql.TypeYear:
		return appendUint16(b, uint16(datumInt(d)))
	case mysql.TypeInt24, mysql.TypeLong:
		return appendUint32(b, uint32(datumInt(d)))
	case mysql.TypeLonglong:
		return appendUint64(b, uint64(datumInt(d)))
	case mysql.TypeFloat:
		return appendUint32(b, math.Float32bits(float32(datumFloat(d))))
	case mysql.TypeDouble:
		return appendUint64(b, math.Float64bits(datumFloat(d)))
	case mysql.TypeDate, mysql.TypeNewDate, mysql.TypeDatetime, mysql.TypeTimestamp:
		if d.Kind() == types.KindTime {
			t := d.TimeFields()
			return appendBinaryDateTime(b, tp, [7]int{t.Year, t.Month, t.Day, t.Hour, t.Minute, t.Second, t.Micro})
		}
		var tmp [64]byte
		dt, _ := parseDateTimeText(datumText(d, tmp[:0]))
		return appendBinaryDateTime(b, tp, dt)
	case mysql.TypeDuration:
		if d.Kind() == types.KindDuration {
			return appendBinaryMicros(b, d.DurationMicros())
		}
		var tmp [64]byte
		return appendBinaryDuration(b, datumText(d, tmp[:0]))
	}
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		return appendLenEncBytes(b, d.Bytes())
	case types.KindFloat64:
		pos := len(b)
		b = append(b, 0)
		if tp == mysql.TypeFloat {
			b = appendFloat32(b, float32(d.Float()))
		} else {
			b = types.AppendFloat(b, d.Float())
		}
		b[pos] = byte(len(b) - pos - 1)
		return b
	default:
		pos := len(b)
		b = append(b, 0)
		b = d.AppendText(b)
		b[pos] = byte(len(b) - pos - 1)
		return b
	}
}

// datumInt returns d as an integer (the bits of an unsigned value).
func datumInt(d *types.Datum) int64 {
	switch d.Kind() {
	case types.KindDecimal, types.KindTime, types.KindDuration:
		if d.Kind() == types.KindDecimal && types.DecimalSign(*d) > 0 {
			if u, ok := types.DecimalToUint(*d); ok {
				return int64(u)
			}
		}
		v, _ := d.ToInt()
		return v
	case types.KindInt64, types.KindUint64:
		return d.Int()
	case types.KindFloat64:
		f := math.Round(d.Float())
		if f >= 0 && f >= math.MaxInt64 {
			return int64(uint64(math.Min(f, math.MaxUint64)))
		}
		return int64(f)
	case types.KindString, types.KindBytes:
		if v, err := strconv.ParseInt(string(d.Bytes()), 10, 64); err == nil {
			return v
		}
		if v, err := strconv.ParseUint(string(d.Bytes()), 10, 64); err == nil {
			return int64(v)
		}
		if f, err := strconv.ParseFloat(string(d.Bytes()), 64); err == nil {
			return int64(math.Round(f))
		}
	}
	return 0
}

func datumFloat(d *types.Datum) float64 {
	switch d.Kind() {
	case types.KindDecimal, types.KindTime, types.KindDuration:
		return d.ToFloat()
	case types.KindInt64:
		return float64(d.Int())
	case types.KindUint64:
		return float64(d.Uint())
	case types.KindFloat64:
		return d.Float()
	case types.KindString, types.KindBytes:
		if f, err := strconv.ParseFloat(string(d.Bytes()), 64); err == nil {
			return f
		}
	}
	return 0
}

func datumText(d *types.Datum, tmp []byte) []byte {
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		return d.Bytes()
	}
	return d.AppendText(tmp)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseDateTimeText parses "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" (any single
// separators) into year, month, day, hour, minute, second, microsecond.
func parseDateTimeText(s []byte) (dt [7]int, ok bool) {
	i, n := 0, 0
	for n < 6 {
		start := i
		v := 0
		for i < len(s) && isDigit(s[i]) && i-start < 9 {
			v = v*10 + int(s[i]-'0')
			i++
		}
		if i == start {
			break
		}
		dt[n] = v
		n++
		if i >= len(s) || (n == 6 && s[i] == '.') {
			break
		}
		i++ // separator
	}
	if n < 3 {
		return [7]int{}, false
	}
	if n == 6 && i < len(s) && s[i] == '.' {
		dt[6] = parseMicros(s[i+1:])
	}
	return dt, true
}

// parseMicros reads up to six fractional digits as microseconds.
func parseMicros(s []byte) int {
	v, digits := 0, 0
	for digits < 6 && digits < len(s) && isDigit(s[digits]) {
		v = v*10 + int(s[digits]-'0')
		digits++
	}
	for ; digits < 6; digits++ {
		v *= 10
	}
	return v
}

// appendBinaryDateTime appends the binary DATE/DATETIME/TIMESTAMP encoding:
// a length byte (0, 4, 7 or 11) and the fields that are needed.
func appendBinaryDateTime(b []byte, tp byte, dt [7]int) []byte {
	if tp == mysql.TypeDate || tp == mysql.TypeNewDate {
		dt[3], dt[4], dt[5], dt[6] = 0, 0, 0, 0
	}
	var n byte
	switch {
	case dt[6] != 0:
		n = 11
	case dt[3]|dt[4]|dt[5] != 0:
		n = 7
	case dt[0]|dt[1]|dt[2] != 0:
		n = 4
	}
	b = append(b, n)
	if n >= 4 {
		b = appendUint16(b, uint16(dt[0]))
		b = append(b, byte(dt[1]), byte(dt[2]))
	}
	if n >= 7 {
		b = append(b, byte(dt[3]), byte(dt[4]), byte(dt[5]))
	}
	if n == 11 {
		b = appendUint32(b, uint32(dt[6]))
	}
	return b
}

// appendBinaryDuration appends the binary TIME encoding of the text form
// "[-]H:MM:SS[.ffffff]" (hours may exceed 24).
func appendBinaryDuration(b []byte, s []byte) []byte {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var parts [3]int
	n, i := 0, 0
	for n < 3 {
		start := i
		v := 0
		for i < len(s) && isDigit(s[i]) && i-start < 9 {
			v = v*10 + int(s[i]-'0')
			i++
		}
		if i == start {
			break
		}
		parts[n] = v
		n++
		if i < len(s) && s[i] == ':' {
			i++
			continue
		}
		break
	}
	var h, m, sec int
	switch n {
	case 3:
		h, m, sec = parts[0], parts[1], parts[2]
	case 2:
		h, m = parts[0], parts[1]
	case 1:
		sec = parts[0]
	}
	us := 0
	if i < len(s) && s[i] == '.' {
		us = parseMicros(s[i+1:])
	}
	var l byte
	switch {
	case us != 0:
		l = 12
	case h|m|sec != 0:
		l = 8
	}
	b = append(b, l)
	if l == 0 {
		return b
	}
	if neg {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendUint32(b, uint32(h/24))
	b = append(b, byte(h%24), byte(m), byte(sec))
	if l == 12 {
		b = appendUint32(b, uint32(us))
	}
	return b
}

// appendBinaryMicros appends the binary TIME encoding of a duration in
// microseconds.
func appendBinaryMicros(b []byte, us int64) []byte {
	neg := us < 0
	if neg {
		us = -us
	}
	sec, frac := us/1000000, us%1000000
	var l byte
	switch {
	case frac != 0:
		l = 12
	case sec != 0:
		l = 8
	}
	b = append(b, l)
	if l == 0 {
		return b
	}
	if neg {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	h := sec / 3600
	b = appendUint32(b, uint32(h/24))
	b = append(b, byte(h%24), byte(sec/60%60), byte(sec%60))
	if l == 12 {
		b = appendUint32(b, uint32(frac))
	}
	return b
}
