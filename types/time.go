package types

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// DATE, DATETIME, TIMESTAMP and TIME values.
//
// A KindTime datum (DATE, DATETIME, TIMESTAMP) keeps the calendar fields
// packed into i, most significant first, so that integer order is time
// order and a DATE equals the DATETIME at its midnight:
//
//	year:14 month:4 day:5 hour:5 minute:6 second:6 microsecond:20
//
// x is the fractional-second precision (fsp, 0..6) and y the MySQL type code
// (mysql.TypeDate, TypeDatetime, TypeTimestamp); they only steer
// formatting. Zero dates ('0000-00-00') and zero parts are representable;
// whether they are accepted is the caller's sql_mode business.
//
// A KindDuration datum (TIME) keeps signed microseconds in i and the fsp in
// x. TIMESTAMP values are stored in UTC and held in the session's zone
// (timezone.go); x's top bit is then the overlap fold mark.

// ErrIncorrectTime reports a string or number that is not a valid
// date/time value.
var ErrIncorrectTime = errors.New("incorrect datetime value")

// MaxFsp is the largest fractional-second precision.
const MaxFsp = 6

// MaxDurationMicros is TIME's range limit, 838:59:59.
const MaxDurationMicros = (838*3600 + 59*60 + 59) * 1000000

// TimeFields are the calendar fields of a DATE/DATETIME/TIMESTAMP.
type TimeFields struct {
	Year, Month, Day, Hour, Minute, Second, Micro int
}

// Pack returns the packed form (see KindTime).
func (t TimeFields) Pack() uint64 {
	return uint64(t.Year)<<46 | uint64(t.Month)<<42 | uint64(t.Day)<<37 |
		uint64(t.Hour)<<32 | uint64(t.Minute)<<26 | uint64(t.Second)<<20 | uint64(t.Micro)
}

// UnpackTime is the inverse of Pack.
func UnpackTime(p uint64) TimeFields {
	return TimeFields{
		Year: int(p >> 46 & 0x3FFF), Month: int(p >> 42 & 0xF), Day: int(p >> 37 & 0x1F),
		Hour: int(p >> 32 & 0x1F), Minute: int(p >> 26 & 0x3F), Second: int(p >> 20 & 0x3F), Micro: int(p & 0xFFFFF),
	}
}

// IsZeroDate reports the all-zero date part ('0000-00-00').
func (t TimeFields) IsZeroDate() bool { return t.Year == 0 && t.Month == 0 && t.Day == 0 }

// HasZeroInDate reports a zero month or day in a non-zero date.
func (t TimeFields) HasZeroInDate() bool { return !t.IsZeroDate() && (t.Month == 0 || t.Day == 0) }

// GoTime returns t as a time.Time in loc (zero parts are not valid Go
// dates; callers check first).
func (t TimeFields) GoTime(loc *time.Location) time.Time {
	return time.Date(t.Year, time.Month(t.Month), t.Day, t.Hour, t.Minute, t.Second, t.Micro*1000, loc)
}

// TimeFieldsOf returns the fields of a Go time (in its own location).
func TimeFieldsOf(t time.Time) TimeFields {
	return TimeFields{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1000}
}

// NewTime returns a DATE/DATETIME/TIMESTAMP datum of type tp with the given
// fields. For DATE the time part is dropped; the fraction is rounded to
// fsp digits.
func NewTime(t TimeFields, tp byte, fsp int) Datum {
	if tp == mysql.TypeDate || tp == mysql.TypeNewDate {
		t.Hour, t.Minute, t.Second, t.Micro = 0, 0, 0, 0
		tp, fsp = mysql.TypeDate, 0
	} else {
		fsp = clampFsp(fsp)
		t = roundMicro(t, fsp)
	}
	return Datum{k: KindTime, i: int64(t.Pack()), x: uint8(fsp), y: tp}
}

// NewTimeFromPacked wraps a packed value (as DecodeTime, keys and rows
// store it).
func NewTimeFromPacked(p uint64, tp byte, fsp int) Datum {
	return Datum{k: KindTime, i: int64(p), x: uint8(fsp), y: tp}
}

func clampFsp(fsp int) int {
	if fsp < 0 {
		return 0
	}
	if fsp > MaxFsp {
		return MaxFsp
	}
	return fsp
}

// roundMicro rounds the microseconds to fsp digits, half up, carrying into
// the seconds (and beyond, through Go's calendar arithmetic).
func roundMicro(t TimeFields, fsp int) TimeFields {
	if fsp >= MaxFsp {
		return t
	}
	p := int(pow10[MaxFsp-fsp])
	us := (t.Micro + p/2) / p * p
	if us < 1000000 {
		t.Micro = us
		return t
	}
	t.Micro = 0
	if t.Month == 0 || t.Day == 0 {
		t.Second++ // zero dates: carry without a calendar (rare)
		if t.Second == 60 {
			t.Second = 59
		}
		return t
	}
	g := t.GoTime(time.UTC).Add(time.Second)
	return TimeFieldsOf(g)
}

// TimePacked is the packed value of a KindTime datum.
func (d Datum) TimePacked() uint64 { return uint64(d.i) }

// TimeFields returns the fields of a KindTime datum.
func (d Datum) TimeFields() TimeFields { return UnpackTime(uint64(d.i)) }

// TimeType is the MySQL type code of a KindTime datum.
func (d Datum) TimeType() byte { return d.y }

// Fsp is the fractional-second precision of a KindTime or KindDuration
// datum.
func (d Datum) Fsp() int { return int(d.x &^ timestampFold) }

// WithTimeType returns a KindTime datum retyped (DATE drops the time part).
func (d Datum) WithTimeType(tp byte, fsp int) Datum {
	return NewTime(d.TimeFields(), tp, fsp)
}

// NewDuration returns a TIME datum of us microseconds, rounded to fsp.
func NewDuration(us int64, fsp int) Datum {
	fsp = clampFsp(fsp)
	if fsp < MaxFsp {
		p := pow10[MaxFsp-fsp]
		if us >= 0 {
			us = (us + p/2) / p * p
		} else {
			us = -((-us + p/2) / p * p)
		}
	}
	return Datum{k: KindDuration, i: us, x: uint8(fsp)}
}

// DurationMicros is the value of a KindDuration datum in microseconds.
func (d Datum) DurationMicros() int64 { return d.i }

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// DaysInMonth is the number of days of the month.
func DaysInMonth(year, month int) int { return daysIn(year, month) }

// Valid checks the field ranges (zero month/day allowed: sql_mode decides).
func (t TimeFields) Valid() bool {
	if t.Year < 0 || t.Year > 9999 || t.Month < 0 || t.Month > 12 || t.Day < 0 || t.Day > 31 ||
		t.Hour < 0 || t.Hour > 23 || t.Minute < 0 || t.Minute > 59 || t.Second < 0 || t.Second > 59 ||
		t.Micro < 0 || t.Micro > 999999 {
		return false
	}
	if t.Month != 0 && t.Day != 0 && t.Day > daysIn(t.Year, t.Month) {
		return false
	}
	return true
}

func twoDigitYear(y int) int {
	if y < 70 {
		return 2000 + y
	}
	return 1900 + y
}

func atoiDigits(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// fracMicros reads a fraction's digits as microseconds, rounding the 7th
// digit half up (the result may be 1000000: a carry).
func fracMicros(s string) int {
	v := 0
	for i := 0; i < 6; i++ {
		v *= 10
		if i < len(s) {
			v += int(s[i] - '0')
		}
	}
	if len(s) > 6 && s[6] >= '5' {
		v++
	}
	return v
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// ParseTimeFields parses MySQL's DATE/DATETIME literal forms:
// 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' with any punctuation as delimiters and
// 'T' or spaces between date and time, two-digit years, and the
// delimiter-less 'YYYYMMDD[HHMMSS[.ffffff]]' / 'YYMMDD[HHMMSS]' forms.
// The fraction is kept to microseconds (rounded); a carry out of it is
// reported as Micro == 1000000 for the caller to normalize (NewTime does
// it through roundMicro when fsp < 6; ParseTime does it always).
func ParseTimeFields(s string) (TimeFields, error) {
	s = strings.TrimSpace(s)
	var t TimeFields
	if s == "" {
		return t, ErrIncorrectTime
	}
	// Delimiter-less forms.
	body, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 && allDigits(s[:i]) {
		body, frac = s[:i], s[i+1:]
		if !allDigits(frac) && frac != "" {
			return t, ErrIncorrectTime
		}
	}
	if allDigits(body) {
		switch len(body) {
		case 14:
			t = TimeFields{atoiDigits(body[0:4]), atoiDigits(body[4:6]), atoiDigits(body[6:8]), atoiDigits(body[8:10]), atoiDigits(body[10:12]), atoiDigits(body[12:14]), 0}
		case 12:
			t = TimeFields{twoDigitYear(atoiDigits(body[0:2])), atoiDigits(body[2:4]), atoiDigits(body[4:6]), atoiDigits(body[6:8]), atoiDigits(body[8:10]), atoiDigits(body[10:12]), 0}
		case 8:
			t = TimeFields{Year: atoiDigits(body[0:4]), Month: atoiDigits(body[4:6]), Day: atoiDigits(body[6:8])}
		case 6:
			t = TimeFields{Year: twoDigitYear(atoiDigits(body[0:2])), Month: atoiDigits(body[2:4]), Day: atoiDigits(body[4:6])}
		default:
			return t, ErrIncorrectTime
		}
		if frac != "" {
			t.Micro = fracMicros(frac)
		}
		return t, checkFields(t)
	}
	// Delimited form: up to six numeric groups, then a fraction.
	var parts [6]int
	var lens [6]int
	n, i := 0, 0
	for n < 6 && i < len(s) {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return t, ErrIncorrectTime
		}
		parts[n], lens[n] = atoiDigits(s[start:i]), i-start
		n++
		if i >= len(s) || n == 6 {
			break
		}
		if n == 3 && (s[i] == 'T' || s[i] == ' ' || s[i] == '\t') {
			for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == 'T') {
				i++
			}
			continue
		}
		// Any run of punctuation delimits.
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && (s[i] < '0' || s[i] > '9') && s[i] < 0x80 && !isLetter(s[i]) {
			i++
		}
		if i < len(s) && (s[i] < '0' || s[i] > '9') {
			return t, ErrIncorrectTime
		}
	}
	if n < 3 {
		return t, ErrIncorrectTime
	}
	if i < len(s) {
		if s[i] != '.' || n < 6 {
			return t, ErrIncorrectTime
		}
		f := s[i+1:]
		j := 0
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		if strings.TrimSpace(f[j:]) != "" {
			return t, ErrIncorrectTime
		}
		t.Micro = fracMicros(f[:j])
	}
	t.Year = parts[0]
	if lens[0] <= 2 {
		t.Year = twoDigitYear(parts[0])
	}
	t.Month, t.Day, t.Hour, t.Minute, t.Second = parts[1], parts[2], parts[3], parts[4], parts[5]
	return t, checkFields(t)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func checkFields(t TimeFields) error {
	if t.Micro == 1000000 {
		t.Micro = 0
	}
	if !t.Valid() {
		return ErrIncorrectTime
	}
	return nil
}

func normalizeCarry(t TimeFields) TimeFields {
	if t.Micro < 1000000 {
		return t
	}
	t.Micro = 999999
	return roundMicro(t, 5) // rounds 999999 up through the carry path
}

// ParseTime parses s as a value of type tp (DATE, DATETIME, TIMESTAMP) with
// fsp fraction digits.
func ParseTime(s string, tp byte, fsp int) (Datum, error) {
	t, err := ParseTimeFields(s)
	if err != nil {
		return Datum{}, err
	}
	if t.Micro >= 1000000 {
		t.Micro = 0
		t = TimeFields{t.Year, t.Month, t.Day, t.Hour, t.Minute, t.Second, 0}
		if t.Month != 0 && t.Day != 0 {
			t = TimeFieldsOf(t.GoTime(time.UTC).Add(time.Second))
		}
	}
	return NewTime(t, tp, fsp), nil
}

// NumberToTimeFields interprets an integer as MySQL does in date context
// (YYMMDD, YYYYMMDD, YYMMDDHHMMSS, YYYYMMDDHHMMSS); 0 is the zero date.
func NumberToTimeFields(n int64) (TimeFields, error) {
	var t TimeFields
	if n == 0 {
		return t, nil
	}
	switch {
	case n < 0:
		return t, ErrIncorrectTime
	case n < 101:
		return t, ErrIncorrectTime
	case n <= 691231:
		n = (n + 20000000) * 1000000
	case n < 700101:
		return t, ErrIncorrectTime
	case n <= 991231:
		n = (n + 19000000) * 1000000
	case n < 10000101:
		return t, ErrIncorrectTime
	case n <= 99991231:
		n *= 1000000
	case n < 101000000:
		return t, ErrIncorrectTime
	case n <= 691231235959:
		n += 20000000000000
	case n < 700101000000:
		return t, ErrIncorrectTime
	case n <= 991231235959:
		n += 19000000000000
	case n > 99991231235959:
		return t, ErrIncorrectTime
	}
	date, tm := n/1000000, n%1000000
	t = TimeFields{int(date / 10000), int(date / 100 % 100), int(date % 100), int(tm / 10000), int(tm / 100 % 100), int(tm % 100), 0}
	return t, checkFields(t)
}

// ToTime converts a datum to a DATE/DATETIME/TIMESTAMP value of type tp.
func (d Datum) ToTime(tp byte, fsp int) (Datum, error) {
	switch d.k {
	case KindTime:
		return NewTime(d.TimeFields(), tp, fsp), nil
	case KindDuration:
		now := TimeFieldsOf(time.Now())
		g := time.Date(now.Year, time.Month(now.Month), now.Day, 0, 0, 0, 0, time.UTC).Add(time.Duration(d.i) * time.Microsecond)
		return NewTime(TimeFieldsOf(g), tp, fsp), nil
	case KindString, KindBytes:
		return ParseTime(string(d.b), tp, fsp)
	case KindInt64, KindUint64:
		if d.k == KindUint64 && d.i < 0 {
			return Datum{}, ErrIncorrectTime
		}
		t, err := NumberToTimeFields(d.i)
		if err != nil {
			return Datum{}, err
		}
		return NewTime(t, tp, fsp), nil
	case KindFloat64, KindDecimal:
		var ip int64
		var micro int
		if d.k == KindFloat64 {
			f := d.Float()
			if f < 0 || f > 99991231235959.999999 {
				return Datum{}, ErrIncorrectTime
			}
			ip = int64(f)
			micro = int(math.Round((f - float64(ip)) * 1e6))
		} else {
			if DecimalSign(d) < 0 {
				return Datum{}, ErrIncorrectTime
			}
			ti, _ := DecimalRound(d, 0, RoundTrunc)
			v, ok := decimalToInt(ti)
			if !ok {
				return Datum{}, ErrIncorrectTime
			}
			ip = v
			fr, _ := DecimalSub(d, ti)
			fr6, _ := DecimalRound(fr, 6, RoundHalfUp)
			c, _ := alignCoef(fr6.i, 6-int(fr6.x))
			micro = int(c)
		}
		t, err := NumberToTimeFields(ip)
		if err != nil {
			return Datum{}, err
		}
		t.Micro = micro
		if micro >= 1000000 {
			t.Micro = 999999
			return NewTime(t, tp, min(fsp, 5)).WithTimeType(tp, fsp), nil
		}
		return NewTime(t, tp, fsp), nil
	}
	return Datum{}, ErrIncorrectTime
}

// appendTime formats a packed time by type and fsp.
func appendTime(buf []byte, p uint64, tp byte, fsp int) []byte {
	t := UnpackTime(p)
	buf = appendPadded(buf, t.Year, 4)
	buf = append(buf, '-')
	buf = appendPadded(buf, t.Month, 2)
	buf = append(buf, '-')
	buf = appendPadded(buf, t.Day, 2)
	if tp == mysql.TypeDate || tp == mysql.TypeNewDate {
		return buf
	}
	buf = append(buf, ' ')
	buf = appendPadded(buf, t.Hour, 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, t.Minute, 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, t.Second, 2)
	return appendFrac(buf, t.Micro, fsp)
}

func appendFrac(buf []byte, micro, fsp int) []byte {
	if fsp <= 0 {
		return buf
	}
	var tmp [8]byte
	f := appendPadded(tmp[:0], micro, 6)
	buf = append(buf, '.')
	return append(buf, f[:min(fsp, 6)]...)
}

func appendPadded(buf []byte, v, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// AppendTimeAs formats a KindTime datum as type tp with fsp digits (how a
// result column of that type prints it).
func (d Datum) AppendTimeAs(buf []byte, tp byte, fsp int) []byte {
	return appendTime(buf, uint64(d.i), tp, fsp)
}

// appendDuration formats [-]HH:MM:SS[.frac].
func appendDuration(buf []byte, us int64, fsp int) []byte {
	if us < 0 {
		buf = append(buf, '-')
		us = -us
	}
	sec := us / 1000000
	buf = appendPadded(buf, int(sec/3600), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(sec/60%60), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(sec%60), 2)
	return appendFrac(buf, int(us%1000000), fsp)
}

// ErrDurationRange reports a TIME outside ±838:59:59; the returned datum is
// clipped to the limit.
var ErrDurationRange = errors.New("TIME value out of range")

// ClipDuration returns a TIME datum of us microseconds, clipped to
// ±838:59:59 with ErrDurationRange when outside it.
func ClipDuration(us int64, fsp int) (Datum, error) { return clipDuration(us, fsp) }

func clipDuration(us int64, fsp int) (Datum, error) {
	if us > MaxDurationMicros {
		return NewDuration(MaxDurationMicros, fsp), ErrDurationRange
	}
	if us < -MaxDurationMicros {
		return NewDuration(-MaxDurationMicros, fsp), ErrDurationRange
	}
	return NewDuration(us, fsp), nil
}

// ParseDuration parses MySQL's TIME forms: '[-][D ]HH:MM[:SS][.frac]',
// '[-]HHMMSS[.frac]' (digits read from the right: SS, MMSS, HHMMSS), and a
// full datetime string (its time part). Out-of-range values are clipped and
// ErrDurationRange returned with them.
func ParseDuration(s string, fsp int) (Datum, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Datum{}, ErrIncorrectTime
	}
	neg := false
	body := s
	if body[0] == '-' {
		neg = true
		body = body[1:]
	} else if body[0] == '+' {
		body = body[1:]
	}
	frac := ""
	if i := strings.IndexByte(body, '.'); i >= 0 {
		body, frac = body[:i], body[i+1:]
		if !allDigits(frac) && frac != "" {
			return Datum{}, ErrIncorrectTime
		}
	}
	var h, m, sec int64
	days := int64(0)
	if sp := strings.IndexByte(body, ' '); sp >= 0 {
		// Either 'D HH:MM:SS' or a full datetime.
		if strings.Count(body[:sp], "-") > 0 || len(body[:sp]) > 3 {
			t, err := ParseTimeFields(s)
			if err != nil {
				return Datum{}, err
			}
			us := int64(t.Hour)*3600e6 + int64(t.Minute)*60e6 + int64(t.Second)*1e6 + int64(t.Micro)
			return NewDuration(us, fsp), nil
		}
		if !allDigits(body[:sp]) {
			return Datum{}, ErrIncorrectTime
		}
		days = int64(atoiDigits(body[:sp]))
		body = strings.TrimLeft(body[sp+1:], " ")
	}
	if strings.IndexByte(body, ':') >= 0 {
		parts := strings.Split(body, ":")
		if len(parts) > 3 {
			return Datum{}, ErrIncorrectTime
		}
		for _, p := range parts {
			if !allDigits(p) || len(p) > 10 {
				return Datum{}, ErrIncorrectTime
			}
		}
		h = int64(atoiDigits(parts[0]))
		m = int64(atoiDigits(parts[1]))
		if len(parts) == 3 {
			sec = int64(atoiDigits(parts[2]))
		}
	} else {
		if !allDigits(body) || len(body) > 10 {
			return Datum{}, ErrIncorrectTime
		}
		v := int64(atoiDigits(body))
		h, m, sec = v/10000, v/100%100, v%100
	}
	if m > 59 || sec > 59 {
		return Datum{}, ErrIncorrectTime
	}
	us := ((days*24+h)*3600+m*60+sec)*1000000 + int64(fracMicros(frac))
	if neg {
		us = -us
	}
	return clipDuration(us, fsp)
}

// ToDuration converts a datum to a TIME value.
func (d Datum) ToDuration(fsp int) (Datum, error) {
	switch d.k {
	case KindDuration:
		return NewDuration(d.i, fsp), nil
	case KindTime:
		t := d.TimeFields()
		return NewDuration(int64(t.Hour)*3600e6+int64(t.Minute)*60e6+int64(t.Second)*1e6+int64(t.Micro), fsp), nil
	case KindString, KindBytes:
		return ParseDuration(string(d.b), fsp)
	case KindInt64, KindUint64, KindFloat64, KindDecimal:
		if d.k == KindInt64 || d.k == KindUint64 {
			v := d.i
			if d.k == KindUint64 && v < 0 {
				return Datum{}, ErrIncorrectTime
			}
			if v > 99991231000000 || v < -99991231000000 {
				return Datum{}, ErrIncorrectTime
			}
			if v >= 10000000000 || v <= -10000000000 {
				t, err := NumberToTimeFields(v)
				if err != nil {
					return Datum{}, err
				}
				return NewDuration(int64(t.Hour)*3600e6+int64(t.Minute)*60e6+int64(t.Second)*1e6, fsp), nil
			}
		}
		var tmp [80]byte
		txt := d.appendNumber(tmp[:0])
		return ParseDuration(string(txt), fsp)
	}
	return Datum{}, ErrIncorrectTime
}

// timeNumber is the numeric value of a time: YYYYMMDD[HHMMSS[.ffffff]] or
// HHMMSS[.ffffff].
func (d Datum) appendNumber(buf []byte) []byte {
	switch d.k {
	case KindTime:
		t := d.TimeFields()
		buf = appendPadded(buf, t.Year, 4)
		buf = appendPadded(buf, t.Month, 2)
		buf = appendPadded(buf, t.Day, 2)
		if d.y == mysql.TypeDate {
			return buf
		}
		buf = appendPadded(buf, t.Hour, 2)
		buf = appendPadded(buf, t.Minute, 2)
		buf = appendPadded(buf, t.Second, 2)
		return appendFrac(buf, t.Micro, d.Fsp())
	case KindDuration:
		us := d.i
		if us < 0 {
			buf = append(buf, '-')
			us = -us
		}
		sec := us / 1000000
		buf = strconv.AppendInt(buf, sec/3600*10000+sec/60%60*100+sec%60, 10)
		return appendFrac(buf, int(us%1000000), int(d.x))
	case KindDecimal:
		return d.appendDecimal(buf)
	case KindFloat64:
		return strconv.AppendFloat(buf, d.Float(), 'f', -1, 64)
	}
	return d.AppendText(buf)
}

// TimeToInt is the integer value of a time in numeric context.
func timeToFloat(d Datum) float64 {
	var tmp [40]byte
	f, _ := strconv.ParseFloat(string(d.appendNumber(tmp[:0])), 64)
	return f
}
