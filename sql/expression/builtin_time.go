package expression

import (
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// TimeFieldType is the field type of a DATE, DATETIME, TIMESTAMP or TIME
// (mysql.TypeDuration) value with fsp fraction digits.
func TimeFieldType(tp byte, fsp int) types.FieldType {
	fsp = min(max(fsp, 0), types.MaxFsp)
	ft := types.FieldType{Tp: tp, Decimal: fsp, Flag: mysql.BinaryFlag, Charset: "binary", Collate: "binary"}
	switch tp {
	case mysql.TypeDate, mysql.TypeNewDate:
		ft.Tp, ft.Flen, ft.Decimal = mysql.TypeDate, 10, 0
	case mysql.TypeDuration:
		ft.Flen = 10
	default:
		ft.Flen = 19
	}
	if fsp > 0 && ft.Tp != mysql.TypeDate {
		ft.Flen += fsp + 1
	}
	return ft
}

// constFsp reads an optional constant fsp argument.
func constFsp(args []Expr, i int) int {
	if len(args) > i {
		if c, ok := args[i].(*Constant); ok {
			v, _ := c.Value.ToInt()
			return int(min(max(v, 0), types.MaxFsp))
		}
		return types.MaxFsp
	}
	return 0
}

func incorrectTime(ctx *Context, d types.Datum) {
	ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Incorrect datetime value: '%s'", d.String()))
}

// toTimeArg converts an argument to a datetime; invalid values warn and
// give ok=false (the function returns NULL, as MySQL does).
func toTimeArg(ctx *Context, d types.Datum) (types.Datum, bool) {
	if d.Kind() == types.KindTime {
		return d, true
	}
	fsp := types.MaxFsp
	t, err := d.ToTime(mysql.TypeDatetime, fsp)
	if err != nil {
		incorrectTime(ctx, d)
		return types.Datum{}, false
	}
	if d.Kind() == types.KindString && len(strings.TrimSpace(d.StringValue())) <= 10 {
		t = t.WithTimeType(mysql.TypeDate, 0)
	} else if t.TimeFields().Micro == 0 {
		t = t.WithTimeType(mysql.TypeDatetime, 0)
	}
	return t, true
}

func eval1(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, bool, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, false, err
	}
	return d, true, nil
}

// timeFn applies fn to the first argument as a datetime.
func timeFn(fn func(ctx *Context, t types.Datum) types.Datum) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		t, ok := toTimeArg(ctx, d)
		if !ok {
			return types.Datum{}, nil
		}
		return fn(ctx, t), nil
	}
}

// clockFn reads hour/minute/second/microsecond from a TIME or a datetime.
func clockFn(part func(us int64) int64) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		var us int64
		switch {
		case d.Kind() == types.KindDuration:
			us = d.DurationMicros()
		case d.Kind() == types.KindTime:
			t := d.TimeFields()
			us = int64(t.Hour)*3600e6 + int64(t.Minute)*60e6 + int64(t.Second)*1e6 + int64(t.Micro)
		default:
			dur, err := d.ToDuration(types.MaxFsp)
			if err != nil && err != types.ErrDurationRange {
				incorrectTime(ctx, d)
				return types.Datum{}, nil
			}
			us = dur.DurationMicros()
		}
		if us < 0 {
			us = -us
		}
		return types.NewInt(part(us)), nil
	}
}

func zeroDateNull(t types.Datum) bool {
	f := t.TimeFields()
	return f.Month == 0 || f.Day == 0
}

var dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

func goDate(t types.TimeFields) time.Time { return t.GoTime(time.UTC) }

// daysFromZero is MySQL's TO_DAYS.
func daysFromZero(t types.TimeFields) int64 {
	// 0000-01-01 is day 1 in MySQL's proleptic count; 1970-01-01 is 719528.
	return int64(goDate(types.TimeFields{Year: t.Year, Month: t.Month, Day: t.Day}).Sub(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)).Hours()/24) + 719528
}

// DATE_FORMAT.
func dateFormat(t types.Datum, format string, isDuration bool) string {
	var f types.TimeFields
	if isDuration {
		us := t.DurationMicros()
		if us < 0 {
			us = -us
		}
		f.Hour, f.Minute, f.Second, f.Micro = int(us/3600e6), int(us/60e6%60), int(us/1e6%60), int(us%1e6)
	} else {
		f = t.TimeFields()
	}
	var b []byte
	pad := func(v, w int) {
		s := strconv.Itoa(v)
		for i := len(s); i < w; i++ {
			b = append(b, '0')
		}
		b = append(b, s...)
	}
	h12 := f.Hour % 12
	if h12 == 0 {
		h12 = 12
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b = append(b, c)
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			pad(f.Year, 4)
		case 'y':
			pad(f.Year%100, 2)
		case 'm':
			pad(f.Month, 2)
		case 'c':
			pad(f.Month, 1)
		case 'd':
			pad(f.Day, 2)
		case 'e':
			pad(f.Day, 1)
		case 'D':
			pad(f.Day, 1)
			switch {
			case f.Day >= 11 && f.Day <= 13:
				b = append(b, "th"...)
			case f.Day%10 == 1:
				b = append(b, "st"...)
			case f.Day%10 == 2:
				b = append(b, "nd"...)
			case f.Day%10 == 3:
				b = append(b, "rd"...)
			default:
				b = append(b, "th"...)
			}
		case 'H':
			pad(f.Hour, 2)
		case 'k':
			pad(f.Hour, 1)
		case 'h', 'I':
			pad(h12, 2)
		case 'l':
			pad(h12, 1)
		case 'i':
			pad(f.Minute, 2)
		case 's', 'S':
			pad(f.Second, 2)
		case 'f':
			pad(f.Micro, 6)
		case 'p':
			if f.Hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'r':
			pad(h12, 2)
			b = append(b, ':')
			pad(f.Minute, 2)
			b = append(b, ':')
			pad(f.Second, 2)
			if f.Hour < 12 {
				b = append(b, " AM"...)
			} else {
				b = append(b, " PM"...)
			}
		case 'T':
			pad(f.Hour, 2)
			b = append(b, ':')
			pad(f.Minute, 2)
			b = append(b, ':')
			pad(f.Second, 2)
		case 'M':
			if f.Month >= 1 {
				b = append(b, monthNames[f.Month-1]...)
			}
		case 'b':
			if f.Month >= 1 {
				b = append(b, monthNames[f.Month-1][:3]...)
			}
		case 'W', 'a', 'w':
			if f.Month == 0 || f.Day == 0 {
				break
			}
			wd := int(goDate(f).Weekday())
			switch format[i] {
			case 'W':
				b = append(b, dayNames[wd]...)
			case 'a':
				b = append(b, dayNames[wd][:3]...)
			default:
				pad(wd, 1)
			}
		case 'j':
			if f.Month != 0 && f.Day != 0 {
				pad(goDate(f).YearDay(), 3)
			}
		default:
			b = append(b, format[i])
		}
	}
	return string(b)
}

// STR_TO_DATE.
func strToDate(s, format string) (types.TimeFields, bool) {
	var t types.TimeFields
	pm, hasPM := false, false
	num := func(maxDigits int) (int, bool) {
		s = strings.TrimLeft(s, " ")
		n := 0
		for n < len(s) && n < maxDigits && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 {
			return 0, false
		}
		v, _ := strconv.Atoi(s[:n])
		s = s[n:]
		return v, true
	}
	name := func(list []string, abbr bool) (int, bool) {
		for i, n := range list {
			if abbr {
				n = n[:3]
			}
			if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
				s = s[len(n):]
				return i, true
			}
		}
		return 0, false
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			if c == ' ' {
				s = strings.TrimLeft(s, " ")
				continue
			}
			if len(s) == 0 || s[0] != c {
				return t, false
			}
			s = s[1:]
			continue
		}
		i++
		var ok bool
		switch format[i] {
		case 'Y':
			t.Year, ok = num(4)
		case 'y':
			var v int
			v, ok = num(2)
			if v < 70 {
				t.Year = 2000 + v
			} else {
				t.Year = 1900 + v
			}
		case 'm', 'c':
			t.Month, ok = num(2)
		case 'd', 'e':
			t.Day, ok = num(2)
		case 'H', 'k', 'h', 'I', 'l':
			t.Hour, ok = num(2)
		case 'i':
			t.Minute, ok = num(2)
		case 's', 'S':
			t.Second, ok = num(2)
		case 'f':
			start := len(s)
			var v int
			v, ok = num(6)
			digits := start - len(s)
			for ; digits < 6; digits++ {
				v *= 10
			}
			t.Micro = v
		case 'p':
			hasPM = true
			if len(s) >= 2 && strings.EqualFold(s[:2], "PM") {
				pm, ok, s = true, true, s[2:]
			} else if len(s) >= 2 && strings.EqualFold(s[:2], "AM") {
				ok, s = true, s[2:]
			}
		case 'T':
			var ok1, ok2, ok3 bool
			t.Hour, ok1 = num(2)
			s = strings.TrimPrefix(s, ":")
			t.Minute, ok2 = num(2)
			s = strings.TrimPrefix(s, ":")
			t.Second, ok3 = num(2)
			ok = ok1 && ok2 && ok3
		case 'M':
			var m int
			m, ok = name(monthNames, false)
			t.Month = m + 1
		case 'b':
			var m int
			m, ok = name(monthNames, true)
			t.Month = m + 1
		case 'W':
			_, ok = name(dayNames, false)
		case 'a':
			_, ok = name(dayNames, true)
		case '%':
			ok = len(s) > 0 && s[0] == '%'
			if ok {
				s = s[1:]
			}
		default:
			ok = false
		}
		if !ok {
			return t, false
		}
	}
	if hasPM {
		if t.Hour > 12 || t.Hour == 0 {
			return t, false
		}
		if pm && t.Hour != 12 {
			t.Hour += 12
		} else if !pm && t.Hour == 12 {
			t.Hour = 0
		}
	}
	return t, t.Valid()
}

func strToDateType(args []Expr) types.FieldType {
	if c, ok := args[1].(*Constant); ok {
		f := string(toStr(c.Value))
		date := strings.ContainsAny(f, "YymcdeDMbjUuVvXxWaw")
		clock := strings.ContainsAny(f, "HkhIlisSfprT")
		switch {
		case date && !clock:
			return TimeFieldType(mysql.TypeDate, 0)
		case clock && !date:
			return TimeFieldType(mysql.TypeDuration, boolFsp(strings.Contains(f, "%f")))
		}
		return TimeFieldType(mysql.TypeDatetime, boolFsp(strings.Contains(f, "%f")))
	}
	return TimeFieldType(mysql.TypeDatetime, types.MaxFsp)
}

func boolFsp(b bool) int {
	if b {
		return types.MaxFsp
	}
	return 0
}

// Intervals.

// interval is a DATE_ADD amount: months plus microseconds.
type interval struct {
	months int64
	micros int64
}

var unitMicros = map[string]int64{"MICROSECOND": 1, "SECOND": 1e6, "MINUTE": 60e6, "HOUR": 3600e6, "DAY": 86400e6, "WEEK": 7 * 86400e6}

var compoundUnits = map[string][]string{
	"YEAR_MONTH":         {"YEAR", "MONTH"},
	"DAY_HOUR":           {"DAY", "HOUR"},
	"DAY_MINUTE":         {"DAY", "HOUR", "MINUTE"},
	"DAY_SECOND":         {"DAY", "HOUR", "MINUTE", "SECOND"},
	"DAY_MICROSECOND":    {"DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"HOUR_MINUTE":        {"HOUR", "MINUTE"},
	"HOUR_SECOND":        {"HOUR", "MINUTE", "SECOND"},
	"HOUR_MICROSECOND":   {"HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"MINUTE_SECOND":      {"MINUTE", "SECOND"},
	"MINUTE_MICROSECOND": {"MINUTE", "SECOND", "MICROSECOND"},
	"SECOND_MICROSECOND": {"SECOND", "MICROSECOND"},
}

func unitInterval(unit string, n int64) (interval, bool) {
	switch unit {
	case "YEAR":
		return interval{months: n * 12}, true
	case "QUARTER":
		return interval{months: n * 3}, true
	case "MONTH":
		return interval{months: n}, true
	}
	m, ok := unitMicros[unit]
	return interval{micros: n * m}, ok
}

func parseInterval(v types.Datum, unit string) (interval, bool) {
	unit = strings.ToUpper(unit)
	if parts, ok := compoundUnits[unit]; ok {
		s := strings.TrimSpace(string(toStr(v)))
		neg := strings.HasPrefix(s, "-")
		var groups []string
		var fracDigits []int
		cur := ""
		afterDot := false
		flush := func() {
			if cur != "" {
				groups = append(groups, cur)
				if afterDot {
					fracDigits = append(fracDigits, len(cur))
				} else {
					fracDigits = append(fracDigits, 0)
				}
			}
			cur = ""
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				cur += s[i : i+1]
				continue
			}
			flush()
			afterDot = s[i] == '.'
		}
		flush()
		if len(groups) == 0 || len(groups) > len(parts) {
			return interval{}, false
		}
		var iv interval
		off := len(parts) - len(groups)
		for i, g := range groups {
			n, _ := strconv.ParseInt(g, 10, 64)
			p := parts[off+i]
			if p == "MICROSECOND" && fracDigits[i] > 0 {
				for d := fracDigits[i]; d < 6; d++ {
					n *= 10
				}
			}
			x, _ := unitInterval(p, n)
			iv.months += x.months
			iv.micros += x.micros
		}
		if neg {
			iv.months, iv.micros = -iv.months, -iv.micros
		}
		return iv, true
	}
	if unit == "SECOND" {
		d, _ := v.ToDecimal()
		r, _ := types.DecimalRound(d, 6, types.RoundHalfUp)
		us, _ := types.DecimalMul(r, types.NewDecimalFromInt(1000000))
		n, ok := us.ToInt()
		return interval{micros: n}, ok
	}
	n, ok := v.ToInt()
	if !ok {
		return interval{}, false
	}
	return unitInterval(unit, n)
}

func isDateUnit(unit string) bool {
	switch strings.ToUpper(unit) {
	case "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH":
		return true
	}
	return false
}

// addInterval adds iv to t; ok is false outside years 0..9999.
func addInterval(t types.TimeFields, iv interval) (types.TimeFields, bool) {
	if iv.months != 0 {
		m := int64(t.Year)*12 + int64(t.Month-1) + iv.months
		if m < 0 || m >= 10000*12 {
			return t, false
		}
		t.Year, t.Month = int(m/12), int(m%12)+1
		if dm := types.DaysInMonth(t.Year, t.Month); t.Day > dm {
			t.Day = dm
		}
	}
	if iv.micros != 0 {
		g := goDate(t).Add(time.Duration(iv.micros) * time.Microsecond)
		if iv.micros/86400e6 > 4000000 || iv.micros/86400e6 < -4000000 {
			return t, false
		}
		t = types.TimeFieldsOf(g)
	}
	return t, t.Year >= 0 && t.Year <= 9999
}

func dateAddType(args []Expr) types.FieldType {
	unit := ""
	if len(args) > 2 {
		if c, ok := args[2].(*Constant); ok {
			unit = string(toStr(c.Value))
		}
	} else {
		unit = "DAY"
	}
	at := args[0].Type()
	fsp := 0
	if strings.Contains(strings.ToUpper(unit), "MICROSECOND") {
		fsp = types.MaxFsp
	}
	switch {
	case at.Tp == mysql.TypeDate && isDateUnit(unit):
		return TimeFieldType(mysql.TypeDate, 0)
	case at.IsTime():
		return TimeFieldType(mysql.TypeDatetime, max(at.Decimal, fsp))
	}
	ft := stringType(args[:1])
	ft.Flen = 29
	return ft
}

func evalDateAdd(sign int64) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		n, err := f.Args[1].Eval(ctx, row)
		if err != nil || n.IsNull() {
			return types.Datum{}, err
		}
		unit := "DAY"
		if len(f.Args) > 2 {
			u, err := f.Args[2].Eval(ctx, row)
			if err != nil || u.IsNull() {
				return types.Datum{}, err
			}
			unit = strings.ToUpper(string(toStr(u)))
		}
		iv, ok := parseInterval(n, unit)
		if !ok {
			return types.Datum{}, nil
		}
		iv.months *= sign
		iv.micros *= sign
		if d.Kind() == types.KindDuration {
			if iv.months != 0 {
				return types.Datum{}, nil
			}
			return types.NewDuration(d.DurationMicros()+iv.micros, max(d.Fsp(), f.Ft.Decimal)), nil
		}
		t, ok := toTimeArg(ctx, d)
		if !ok || zeroDateNull(t) {
			return types.Datum{}, nil
		}
		r, ok := addInterval(t.TimeFields(), iv)
		if !ok {
			return types.Datum{}, nil
		}
		tp, fsp := mysql.TypeDatetime, t.Fsp()
		if t.TimeType() == mysql.TypeDate && isDateUnit(unit) {
			tp = mysql.TypeDate
		}
		if r.Micro != 0 {
			fsp = types.MaxFsp
		}
		if f.Ft.IsTime() {
			fsp = max(f.Ft.Decimal, 0)
		}
		return types.NewTime(r, tp, fsp), nil
	}
}

func evalTimestampDiff(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	u, err := f.Args[0].Eval(ctx, row)
	if err != nil || u.IsNull() {
		return types.Datum{}, err
	}
	a, err := f.Args[1].Eval(ctx, row)
	if err != nil || a.IsNull() {
		return types.Datum{}, err
	}
	b, err := f.Args[2].Eval(ctx, row)
	if err != nil || b.IsNull() {
		return types.Datum{}, err
	}
	ta, ok1 := toTimeArg(ctx, a)
	tb, ok2 := toTimeArg(ctx, b)
	if !ok1 || !ok2 || zeroDateNull(ta) || zeroDateNull(tb) {
		return types.Datum{}, nil
	}
	fa, fb := ta.TimeFields(), tb.TimeFields()
	unit := strings.ToUpper(string(toStr(u)))
	switch unit {
	case "MONTH", "QUARTER", "YEAR":
		months := int64(fb.Year*12+fb.Month) - int64(fa.Year*12+fa.Month)
		restA := types.TimeFields{Day: fa.Day, Hour: fa.Hour, Minute: fa.Minute, Second: fa.Second, Micro: fa.Micro}.Pack()
		restB := types.TimeFields{Day: fb.Day, Hour: fb.Hour, Minute: fb.Minute, Second: fb.Second, Micro: fb.Micro}.Pack()
		if months > 0 && restB < restA {
			months--
		} else if months < 0 && restB > restA {
			months++
		}
		switch unit {
		case "QUARTER":
			months /= 3
		case "YEAR":
			months /= 12
		}
		return types.NewInt(months), nil
	}
	per, ok := unitMicros[unit]
	if !ok {
		return types.Datum{}, errno.New(mysql.ErrWrongArguments, "Incorrect arguments to TIMESTAMPDIFF")
	}
	diff := goDate(fb).Sub(goDate(fa)).Microseconds()
	return types.NewInt(diff / per), nil
}

// evalNow is NOW() and its synonyms: the statement's time in the session's
// zone (fixed for the statement, as in MySQL); dateOnly is CURDATE().
func evalNow(dateOnly bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		if dateOnly {
			return ctx.NowDatum(0).WithTimeType(mysql.TypeDate, 0), nil
		}
		return ctx.NowDatum(f.Ft.Decimal), nil
	}
}

// evalSysdate is SYSDATE(): the time it runs, not the statement's.
func evalSysdate(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	now, fold := types.InstantIn(time.Now(), ctx.Zone())
	now.Micro -= now.Micro % int(truncUnit[f.Ft.Decimal])
	return types.NewTime(now, mysql.TypeDatetime, f.Ft.Decimal).WithFold(fold), nil
}

// clockMicros is the time of day of t in microseconds, truncated to fsp.
func clockMicros(t types.TimeFields, fsp int) int64 {
	us := int64(t.Hour)*3600e6 + int64(t.Minute)*60e6 + int64(t.Second)*1e6 + int64(t.Micro)
	return us - us%truncUnit[fsp]
}

func evalCurTime(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	return types.NewDuration(clockMicros(types.TimeFieldsOf(ctx.Now()), f.Ft.Decimal), f.Ft.Decimal), nil
}

// utcNow is the statement's time in UTC (UTC_TIMESTAMP, UTC_DATE,
// UTC_TIME).
func utcNow(ctx *Context) types.TimeFields {
	return types.TimeFieldsOf(ctx.Now().UTC())
}

func evalUTCTimestamp(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	now := utcNow(ctx)
	now.Micro -= now.Micro % int(truncUnit[f.Ft.Decimal])
	return types.NewTime(now, mysql.TypeDatetime, f.Ft.Decimal), nil
}

func evalUTCDate(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	return types.NewTime(utcNow(ctx), mysql.TypeDate, 0), nil
}

func evalUTCTime(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	return types.NewDuration(clockMicros(utcNow(ctx), f.Ft.Decimal), f.Ft.Decimal), nil
}

// evalConvertTZ is CONVERT_TZ(dt, from, to): NULL for a NULL argument, an
// unknown zone or an invalid datetime; a value whose instant lies outside
// TIMESTAMP's range is returned unconverted (MySQL's rule).
func evalConvertTZ(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	var args [3]types.Datum
	for i := range args {
		d, err := f.Args[i].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return types.Datum{}, err
		}
		args[i] = d
	}
	t, ok := toTimeArg(ctx, args[0])
	if !ok || zeroDateNull(t) {
		return types.Datum{}, nil
	}
	from, err1 := types.LoadTimeZone(string(toStr(args[1])))
	to, err2 := types.LoadTimeZone(string(toStr(args[2])))
	if err1 != nil || err2 != nil {
		return types.Datum{}, nil
	}
	fsp := f.Ft.Decimal
	utc, _ := from.ToUTC(t.TimeFields(), t.Fold())
	if !types.TimestampInRange(utc) {
		return types.NewTime(t.TimeFields(), mysql.TypeDatetime, fsp), nil
	}
	local, _ := to.FromUTC(utc)
	return types.NewTime(local, mysql.TypeDatetime, fsp), nil
}

// convertTZType is DATETIME with the first argument's precision: a time
// type's, a constant string's fraction digits, else 6.
func convertTZType(args []Expr) types.FieldType {
	at := args[0].Type()
	switch {
	case at.IsTime() || at.Tp == mysql.TypeDuration:
		return TimeFieldType(mysql.TypeDatetime, max(at.Decimal, 0))
	case at.IsString():
		if c, ok := args[0].(*Constant); ok && !c.Value.IsNull() {
			s := strings.TrimSpace(string(toStr(c.Value)))
			if i := strings.LastIndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s[i:], ":- ") {
				return TimeFieldType(mysql.TypeDatetime, min(len(s)-i-1, types.MaxFsp))
			}
			return TimeFieldType(mysql.TypeDatetime, 0)
		}
	}
	return TimeFieldType(mysql.TypeDatetime, types.MaxFsp)
}

func init() {
	add := func(name string, minArgs, maxArgs int, fn evalFunc, rt func([]Expr) types.FieldType) {
		registerBuiltin("time", name, builtin{minArgs, maxArgs, fn, rt, false})
	}
	nowType := func(args []Expr) types.FieldType { return TimeFieldType(mysql.TypeDatetime, constFsp(args, 0)) }
	for _, n := range []string{"now", "current_timestamp", "localtime", "localtimestamp"} {
		registerBuiltin("time", n, builtin{0, 1, evalNow(false), nowType, true})
	}
	registerBuiltin("time", "sysdate", builtin{0, 1, evalSysdate, nowType, true})
	registerBuiltin("time", "utc_timestamp", builtin{0, 1, evalUTCTimestamp, nowType, true})
	registerBuiltin("time", "utc_date", builtin{0, 0, evalUTCDate, func([]Expr) types.FieldType { return TimeFieldType(mysql.TypeDate, 0) }, true})
	registerBuiltin("time", "utc_time", builtin{0, 1, evalUTCTime, func(args []Expr) types.FieldType { return TimeFieldType(mysql.TypeDuration, constFsp(args, 0)) }, true})
	add("convert_tz", 3, 3, evalConvertTZ, convertTZType)
	for _, n := range []string{"curdate", "current_date"} {
		registerBuiltin("time", n, builtin{0, 0, evalNow(true), func([]Expr) types.FieldType { return TimeFieldType(mysql.TypeDate, 0) }, true})
	}
	for _, n := range []string{"curtime", "current_time"} {
		registerBuiltin("time", n, builtin{0, 1, evalCurTime, func(args []Expr) types.FieldType { return TimeFieldType(mysql.TypeDuration, constFsp(args, 0)) }, true})
	}

	intFn := func(get func(t types.TimeFields) int64) evalFunc {
		return timeFn(func(ctx *Context, t types.Datum) types.Datum { return types.NewInt(get(t.TimeFields())) })
	}
	add("date", 1, 1, timeFn(func(ctx *Context, t types.Datum) types.Datum { return t.WithTimeType(mysql.TypeDate, 0) }),
		func([]Expr) types.FieldType { return TimeFieldType(mysql.TypeDate, 0) })
	add("year", 1, 1, intFn(func(t types.TimeFields) int64 { return int64(t.Year) }), intType)
	add("month", 1, 1, intFn(func(t types.TimeFields) int64 { return int64(t.Month) }), intType)
	add("quarter", 1, 1, intFn(func(t types.TimeFields) int64 { return int64((t.Month + 2) / 3) }), intType)
	add("day", 1, 1, intFn(func(t types.TimeFields) int64 { return int64(t.Day) }), intType)
	add("dayofmonth", 1, 1, intFn(func(t types.TimeFields) int64 { return int64(t.Day) }), intType)
	add("to_days", 1, 1, intFn(daysFromZero), intType)
	nullOnZero := func(get func(t types.TimeFields) types.Datum) evalFunc {
		return timeFn(func(ctx *Context, t types.Datum) types.Datum {
			if zeroDateNull(t) {
				return types.Datum{}
			}
			return get(t.TimeFields())
		})
	}
	add("dayofweek", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum { return types.NewInt(int64(goDate(t).Weekday()) + 1) }), intType)
	add("weekday", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum { return types.NewInt((int64(goDate(t).Weekday()) + 6) % 7) }), intType)
	add("dayofyear", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum { return types.NewInt(int64(goDate(t).YearDay())) }), intType)
	add("dayname", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum { return types.NewString(dayNames[goDate(t).Weekday()]) }), stringType)
	add("monthname", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum { return types.NewString(monthNames[t.Month-1]) }), stringType)
	add("last_day", 1, 1, nullOnZero(func(t types.TimeFields) types.Datum {
		t.Day = types.DaysInMonth(t.Year, t.Month)
		return types.NewTime(t, mysql.TypeDate, 0)
	}), func([]Expr) types.FieldType { return TimeFieldType(mysql.TypeDate, 0) })
	add("hour", 1, 1, clockFn(func(us int64) int64 { return us / 3600e6 }), intType)
	add("minute", 1, 1, clockFn(func(us int64) int64 { return us / 60e6 % 60 }), intType)
	add("second", 1, 1, clockFn(func(us int64) int64 { return us / 1e6 % 60 }), intType)
	add("microsecond", 1, 1, clockFn(func(us int64) int64 { return us % 1e6 }), intType)
	add("time", 1, 1, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		r, err := d.ToDuration(f.Ft.Decimal)
		if err != nil && err != types.ErrDurationRange {
			incorrectTime(ctx, d)
			return types.Datum{}, nil
		}
		return r, nil
	}, func(args []Expr) types.FieldType {
		return TimeFieldType(mysql.TypeDuration, max(args[0].Type().Decimal, 0))
	})
	add("date_format", 2, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		fm, err := f.Args[1].Eval(ctx, row)
		if err != nil || fm.IsNull() {
			return types.Datum{}, err
		}
		if d.Kind() == types.KindDuration {
			return types.NewString(dateFormat(d, string(toStr(fm)), true)), nil
		}
		t, ok := toTimeArg(ctx, d)
		if !ok {
			return types.Datum{}, nil
		}
		return types.NewString(dateFormat(t, string(toStr(fm)), false)), nil
	}, func(args []Expr) types.FieldType { ft := stringType(nil); ft.Flen = 64; return ft })
	for _, n := range []string{"date_add", "adddate"} {
		add(n, 2, 3, evalDateAdd(1), dateAddType)
	}
	for _, n := range []string{"date_sub", "subdate"} {
		add(n, 2, 3, evalDateAdd(-1), dateAddType)
	}
	add("datediff", 2, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		ta, ok1 := toTimeArg(ctx, a)
		tb, ok2 := toTimeArg(ctx, b)
		if !ok1 || !ok2 || zeroDateNull(ta) || zeroDateNull(tb) {
			return types.Datum{}, nil
		}
		return types.NewInt(daysFromZero(ta.TimeFields()) - daysFromZero(tb.TimeFields())), nil
	}, intType)
	add("timestampdiff", 3, 3, evalTimestampDiff, intType)
	add("extract", 2, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		u, err := f.Args[0].Eval(ctx, row)
		if err != nil || u.IsNull() {
			return types.Datum{}, err
		}
		d, err := f.Args[1].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return types.Datum{}, err
		}
		t, ok := toTimeArg(ctx, d)
		if !ok {
			return types.Datum{}, nil
		}
		x := t.TimeFields()
		switch strings.ToUpper(string(toStr(u))) {
		case "YEAR":
			return types.NewInt(int64(x.Year)), nil
		case "QUARTER":
			return types.NewInt(int64((x.Month + 2) / 3)), nil
		case "MONTH":
			return types.NewInt(int64(x.Month)), nil
		case "DAY":
			return types.NewInt(int64(x.Day)), nil
		case "HOUR":
			return types.NewInt(int64(x.Hour)), nil
		case "MINUTE":
			return types.NewInt(int64(x.Minute)), nil
		case "SECOND":
			return types.NewInt(int64(x.Second)), nil
		case "MICROSECOND":
			return types.NewInt(int64(x.Micro)), nil
		case "YEAR_MONTH":
			return types.NewInt(int64(x.Year*100 + x.Month)), nil
		case "DAY_HOUR":
			return types.NewInt(int64(x.Day*100 + x.Hour)), nil
		case "HOUR_MINUTE":
			return types.NewInt(int64(x.Hour*100 + x.Minute)), nil
		case "HOUR_SECOND":
			return types.NewInt(int64(x.Hour*10000 + x.Minute*100 + x.Second)), nil
		case "MINUTE_SECOND":
			return types.NewInt(int64(x.Minute*100 + x.Second)), nil
		case "DAY_SECOND":
			return types.NewInt(int64(x.Day)*1000000 + int64(x.Hour*10000+x.Minute*100+x.Second)), nil
		}
		return types.Datum{}, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this EXTRACT unit")
	}, intType)
	registerBuiltin("time", "unix_timestamp", builtin{0, 1, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		if len(f.Args) == 0 {
			return types.NewInt(ctx.Now().Unix()), nil
		}
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		t, ok := toTimeArg(ctx, d)
		if !ok || zeroDateNull(t) {
			return types.NewInt(0), nil
		}
		// The argument is a local time in the session's zone (a TIMESTAMP
		// column's value keeps its overlap mark).
		tf := t.TimeFields()
		utc, _ := ctx.Zone().ToUTC(tf, t.Fold())
		sec := utc.GoTime(time.UTC).Unix()
		if sec < 0 {
			sec, utc.Micro = 0, 0
		}
		if f.Ft.Tp == mysql.TypeNewDecimal {
			return types.NewDecimalFromCoef(sec*1000000+int64(utc.Micro), 6), nil
		}
		return types.NewInt(sec), nil
	}, func(args []Expr) types.FieldType {
		if len(args) == 1 && args[0].Type().Decimal > 0 && args[0].Type().IsTime() {
			return decimalType(18, 6)
		}
		return intType(args)
	}, true})
	add("from_unixtime", 1, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, ok, err := eval1(ctx, f, row)
		if !ok {
			return types.Datum{}, err
		}
		x, _ := d.ToDecimal()
		if types.DecimalSign(x) < 0 {
			return types.Datum{}, nil
		}
		us, err := types.DecimalMul(x, types.NewDecimalFromInt(1000000))
		if err != nil {
			return types.Datum{}, nil
		}
		n, ok := us.ToInt()
		if !ok {
			return types.Datum{}, nil
		}
		local, fold := types.InstantIn(time.UnixMicro(n), ctx.Zone())
		fsp := min(x.DecimalScale(), types.MaxFsp)
		t := types.NewTime(local, mysql.TypeDatetime, fsp).WithFold(fold)
		if len(f.Args) > 1 {
			fm, err := f.Args[1].Eval(ctx, row)
			if err != nil || fm.IsNull() {
				return types.Datum{}, err
			}
			return types.NewString(dateFormat(t, string(toStr(fm)), false)), nil
		}
		return t, nil
	}, func(args []Expr) types.FieldType {
		if len(args) > 1 {
			return stringType(nil)
		}
		return TimeFieldType(mysql.TypeDatetime, min(decScale(args[0].Type()), types.MaxFsp))
	})
	add("str_to_date", 2, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		t, ok := strToDate(string(toStr(a)), string(toStr(b)))
		if !ok {
			ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Incorrect datetime value: '%s' for function str_to_date", a.String()))
			return types.Datum{}, nil
		}
		if f.Ft.Tp == mysql.TypeDuration {
			return types.NewDuration(int64(t.Hour)*3600e6+int64(t.Minute)*60e6+int64(t.Second)*1e6+int64(t.Micro), f.Ft.Decimal), nil
		}
		return types.NewTime(t, f.Ft.Tp, f.Ft.Decimal), nil
	}, strToDateType)
	add("timediff", 2, 2, func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		var x, y int64
		if a.Kind() == types.KindDuration || b.Kind() == types.KindDuration {
			da, e1 := a.ToDuration(types.MaxFsp)
			db, e2 := b.ToDuration(types.MaxFsp)
			if (e1 != nil && e1 != types.ErrDurationRange) || (e2 != nil && e2 != types.ErrDurationRange) {
				return types.Datum{}, nil
			}
			x, y = da.DurationMicros(), db.DurationMicros()
		} else {
			ta, ok1 := toTimeArg(ctx, a)
			tb, ok2 := toTimeArg(ctx, b)
			if !ok1 || !ok2 {
				return types.Datum{}, nil
			}
			x, y = goDate(ta.TimeFields()).UnixMicro(), goDate(tb.TimeFields()).UnixMicro()
		}
		us := x - y
		us = max(min(us, types.MaxDurationMicros), -types.MaxDurationMicros)
		return types.NewDuration(us, f.Ft.Decimal), nil
	}, func(args []Expr) types.FieldType {
		return TimeFieldType(mysql.TypeDuration, max(args[0].Type().Decimal, args[1].Type().Decimal, 0))
	})
}
