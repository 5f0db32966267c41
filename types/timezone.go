package types

import (
	"errors"
	"strings"
	"sync"
	"time"

	// The tz database is compiled in, so named zones work on hosts without
	// zoneinfo files (and every node of a cluster knows the same zones).
	_ "time/tzdata"
)

// Time zones (the time_zone variable, CONVERT_TZ) and the TIMESTAMP
// conversion rules.
//
// A TIMESTAMP value is an instant: it is stored as its UTC calendar fields
// and shown in the session's zone. A KindTime datum of type TIMESTAMP in
// the executor holds the session-zone fields; the executor converts them
// with ToUTC when it writes a row or builds a key and with FromUTC when it
// reads one. Local to UTC is not one-to-one where the clocks change:
//   - in a gap (spring forward) the local time does not exist; ToUTC gives
//     the first instant after the gap and reports it (MySQL's rule);
//   - in an overlap (fall back) it names two instants; ToUTC picks the
//     earlier unless the datum carries the fold mark (see WithFold), which
//     FromUTC sets on the later one, so a value read and written back
//     unchanged keeps its instant.

// ErrUnknownTimeZone reports a time zone name or offset MySQL would not
// accept (1298).
var ErrUnknownTimeZone = errors.New("unknown or incorrect time zone")

// TimeZone is a time zone as the time_zone variable names it.
type TimeZone struct {
	name  string
	loc   *time.Location
	fixed bool // a constant offset (UTC, '+hh:mm'): no transitions
	off   int  // the constant offset in seconds, when fixed
}

// UTC is the zone TIMESTAMP values are stored in.
var UTC = &TimeZone{name: "+00:00", loc: time.UTC, fixed: true}

// Name is the zone as @@time_zone shows it.
func (z *TimeZone) Name() string { return z.name }

// Location is the zone for Go's time package.
func (z *TimeZone) Location() *time.Location { return z.loc }

// IsUTC reports a zone whose local time is UTC (conversion is the
// identity).
func (z *TimeZone) IsUTC() bool { return z.fixed && z.off == 0 }

// SystemZone is 'SYSTEM': the process's local zone (TZ, /etc/localtime).
func SystemZone() *TimeZone {
	systemOnce.Do(func() {
		systemZone = newZone("SYSTEM", time.Local)
	})
	return systemZone
}

var (
	systemOnce sync.Once
	systemZone *TimeZone
)

// SystemZoneName is system_time_zone: the abbreviation of the process's
// zone now, as MySQL shows it (UTC, CET, ...).
func SystemZoneName() string {
	name, _ := time.Now().In(time.Local).Zone()
	return name
}

func newZone(name string, loc *time.Location) *TimeZone {
	z := &TimeZone{name: name, loc: loc}
	// A zone without transitions has one offset for all time; checking two
	// far-apart instants and the zone bounds finds it.
	t := time.Date(2000, 1, 1, 0, 0, 0, 0, loc)
	if start, end := t.ZoneBounds(); start.IsZero() && end.IsZero() {
		_, z.off = t.Zone()
		z.fixed = true
	}
	return z
}

var zoneCache sync.Map // canonical name -> *TimeZone

// LoadTimeZone resolves a time_zone value: 'SYSTEM', an offset
// '[+-]h[h]:mm' from -13:59 to +14:00, or a name of the tz database
// (matched without regard to case, as MySQL matches its zone tables).
// Anything else is ErrUnknownTimeZone.
func LoadTimeZone(name string) (*TimeZone, error) {
	if strings.EqualFold(name, "SYSTEM") {
		return SystemZone(), nil
	}
	if name != "" && (name[0] == '+' || name[0] == '-') {
		return offsetZone(name)
	}
	if z, ok := zoneCache.Load(name); ok {
		return z.(*TimeZone), nil
	}
	loc, err := loadLocationFold(name)
	if err != nil {
		return nil, ErrUnknownTimeZone
	}
	z := newZone(name, loc)
	actual, _ := zoneCache.LoadOrStore(name, z)
	return actual.(*TimeZone), nil
}

// loadLocationFold loads a tz database zone, trying the name as given,
// then its usual capitalization (each word capitalized: america/new_york),
// then all upper case (utc, cet, est5edt): Go's lookup is case-sensitive.
func loadLocationFold(name string) (*time.Location, error) {
	if name == "" || name == "Local" || strings.Contains(name, "..") {
		return nil, ErrUnknownTimeZone
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, nil
	}
	b := []byte(strings.ToLower(name))
	upper := true
	for i, c := range b {
		if upper && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		upper = c == '/' || c == '_' || c == '-'
	}
	if loc, err := time.LoadLocation(string(b)); err == nil {
		return loc, nil
	}
	return time.LoadLocation(strings.ToUpper(name))
}

// offsetZone parses an offset as MySQL 8 does: a sign, hour digits, ':',
// minute digits (at most 59), at least four characters in all, from -13:59
// through +14:00. Its name is normalized to '+hh:mm'.
func offsetZone(s string) (*TimeZone, error) {
	colon := strings.IndexByte(s, ':')
	if len(s) < 4 || colon < 1 || colon+1 >= len(s) || len(s) > 12 ||
		!(colon == 1 || allDigits(s[1:colon])) || !allDigits(s[colon+1:]) {
		return nil, ErrUnknownTimeZone
	}
	h, m := atoiDigits(s[1:colon]), atoiDigits(s[colon+1:])
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	if m > 59 || off > 14*3600 || off < -(13*3600+59*60) {
		return nil, ErrUnknownTimeZone
	}
	sign, abs := byte('+'), off
	if off < 0 {
		sign, abs = '-', -off
	}
	b := appendPadded([]byte{sign}, abs/3600, 2)
	name := string(appendPadded(append(b, ':'), abs/60%60, 2))
	return &TimeZone{name: name, loc: time.FixedZone(name, off), fixed: true, off: off}, nil
}

// secondsOf is the seconds since 1970 of t's fields read as UTC.
func secondsOf(t TimeFields) int64 {
	return time.Date(t.Year, time.Month(t.Month), t.Day, t.Hour, t.Minute, t.Second, 0, time.UTC).Unix()
}

func fieldsOfSeconds(sec int64, micro int) TimeFields {
	f := TimeFieldsOf(time.Unix(sec, 0).UTC())
	f.Micro = micro
	return f
}

// offsetAt is z's UTC offset, in seconds, at the instant sec.
func (z *TimeZone) offsetAt(sec int64) int {
	if z.fixed {
		return z.off
	}
	_, off := time.Unix(sec, 0).In(z.loc).Zone()
	return off
}

// ToUTC converts local calendar fields in z to UTC fields. gap reports a
// local time the clocks skip (the result is the first instant after the
// gap); fold picks the later of two instants in an overlap. Zero dates
// and dates with zero parts are returned unchanged.
func (z *TimeZone) ToUTC(t TimeFields, fold bool) (utc TimeFields, gap bool) {
	if t.Month == 0 || t.Day == 0 {
		return t, false
	}
	if z.fixed {
		if z.off == 0 {
			return t, false
		}
		return fieldsOfSeconds(secondsOf(t)-int64(z.off), t.Micro), false
	}
	sec, gap := z.localToInstant(secondsOf(t), fold)
	return fieldsOfSeconds(sec, t.Micro), gap
}

// localToInstant finds the instant whose local time in z is local (both
// in seconds). The offsets a day before and after bound the candidates:
// real zones change offset at most once within a day.
func (z *TimeZone) localToInstant(local int64, fold bool) (int64, bool) {
	before, after := z.offsetAt(local-86400), z.offsetAt(local+86400)
	var found []int64
	for _, off := range []int{before, after} {
		u := local - int64(off)
		if z.offsetAt(u) == off && (len(found) == 0 || found[0] != u) {
			found = append(found, u)
		}
	}
	switch len(found) {
	case 1:
		return found[0], false
	case 2:
		early, late := min(found[0], found[1]), max(found[0], found[1])
		if fold {
			return late, false
		}
		return early, false
	}
	// A gap: under the earlier offset the time lies past the transition,
	// whose instant starts the zone period that contains it.
	start, _ := time.Unix(local-int64(before), 0).In(z.loc).ZoneBounds()
	if start.IsZero() {
		return local - int64(after), true
	}
	return start.Unix(), true
}

// FromUTC converts UTC fields to local fields in z; fold reports the later
// of two instants with the same local time (an overlap).
func (z *TimeZone) FromUTC(t TimeFields) (local TimeFields, fold bool) {
	if t.Month == 0 || t.Day == 0 {
		return t, false
	}
	if z.fixed {
		if z.off == 0 {
			return t, false
		}
		return fieldsOfSeconds(secondsOf(t)+int64(z.off), t.Micro), false
	}
	sec := secondsOf(t)
	off := z.offsetAt(sec)
	localSec := sec + int64(off)
	if early, _ := z.localToInstant(localSec, false); early < sec {
		fold = true
	}
	return fieldsOfSeconds(localSec, t.Micro), fold
}

// timestampFold marks, in a KindTime datum's x, the later instant of an
// overlap (see FromUTC); the low bits are the fsp.
const timestampFold = 0x80

// WithFold returns d (a KindTime datum) marked as the later of two
// instants sharing its local time, or unmarked.
func (d Datum) WithFold(fold bool) Datum {
	if fold {
		d.x |= timestampFold
	} else {
		d.x &^= timestampFold
	}
	return d
}

// Fold reports the mark WithFold sets.
func (d Datum) Fold() bool { return d.k == KindTime && d.x&timestampFold != 0 }

// Timestamp range: '1970-01-01 00:00:01' to '2038-01-19 03:14:07.999999'
// UTC.
var (
	timestampMinUTC = TimeFields{Year: 1970, Month: 1, Day: 1, Second: 1}.Pack()
	timestampMaxUTC = TimeFields{Year: 2038, Month: 1, Day: 19, Hour: 3, Minute: 14, Second: 7, Micro: 999999}.Pack()
)

// TimestampInRange reports whether UTC fields lie in TIMESTAMP's range.
func TimestampInRange(utc TimeFields) bool {
	p := utc.Pack()
	return p >= timestampMinUTC && p <= timestampMaxUTC
}

// ConvertTZ converts fields from one zone to another as CONVERT_TZ does
// (a local time in a gap of from is taken as the gap's end).
func ConvertTZ(t TimeFields, from, to *TimeZone) TimeFields {
	utc, _ := from.ToUTC(t, false)
	local, _ := to.FromUTC(utc)
	return local
}

// InstantIn returns the fields of instant g in z, with the fold mark.
func InstantIn(g time.Time, z *TimeZone) (TimeFields, bool) {
	return z.FromUTC(TimeFieldsOf(g.UTC()))
}
