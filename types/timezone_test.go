package types

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

func mustZone(t *testing.T, name string) *TimeZone {
	t.Helper()
	z, err := LoadTimeZone(name)
	if err != nil {
		t.Fatalf("LoadTimeZone(%q): %v", name, err)
	}
	return z
}

func fields(t *testing.T, s string) TimeFields {
	t.Helper()
	f, err := ParseTimeFields(s)
	if err != nil {
		t.Fatalf("ParseTimeFields(%q): %v", s, err)
	}
	return f
}

func show(f TimeFields) string {
	return string(NewTime(f, mysql.TypeDatetime, 6).AppendText(nil))
}

func TestLoadTimeZone(t *testing.T) {
	for _, c := range []struct{ in, name string }{
		{"+00:00", "+00:00"},
		{"+14:00", "+14:00"},
		{"-13:59", "-13:59"},
		{"+5:3", "+05:03"},
		{"-0:00", "+00:00"},
		{"+:30", "+00:30"},
		{"SYSTEM", "SYSTEM"},
		{"system", "SYSTEM"},
		{"Europe/Paris", "Europe/Paris"},
		{"europe/paris", "europe/paris"},
		{"america/new_york", "america/new_york"},
		{"utc", "utc"},
	} {
		if got := mustZone(t, c.in).Name(); got != c.name {
			t.Errorf("LoadTimeZone(%q).Name() = %q, want %q", c.in, got, c.name)
		}
	}
	for _, bad := range []string{"", "+14:01", "-14:00", "+1:60", "+1:", "+130", "1:00", "+01:00:00", "Nowhere/City", "Local", "../etc/passwd", "+a:00"} {
		if _, err := LoadTimeZone(bad); err != ErrUnknownTimeZone {
			t.Errorf("LoadTimeZone(%q) = %v, want ErrUnknownTimeZone", bad, err)
		}
	}
}

func TestZoneConversions(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	off := mustZone(t, "+05:30")
	for _, c := range []struct {
		zone      *TimeZone
		local     string
		fold      bool
		utc       string
		gap       bool
		backFold  bool // FromUTC(utc) marks the later instant
		backLocal string
	}{
		{off, "2020-01-01 00:00:00", false, "2019-12-31 18:30:00.000000", false, false, ""},
		{ny, "2020-07-01 12:00:00.5", false, "2020-07-01 16:00:00.500000", false, false, ""},
		{ny, "2020-01-01 12:00:00", false, "2020-01-01 17:00:00.000000", false, false, ""},
		// Spring forward 2010-03-14 02:00 -> 03:00: the gap maps to its end.
		{ny, "2010-03-14 02:30:00", false, "2010-03-14 07:00:00.000000", true, false, "2010-03-14 03:00:00.000000"},
		{ny, "2010-03-14 02:00:00", false, "2010-03-14 07:00:00.000000", true, false, "2010-03-14 03:00:00.000000"},
		{ny, "2010-03-14 01:59:59", false, "2010-03-14 06:59:59.000000", false, false, ""},
		// Fall back 2010-11-07 02:00 EDT -> 01:00 EST: the earlier instant
		// unless folded.
		{ny, "2010-11-07 01:30:00", false, "2010-11-07 05:30:00.000000", false, false, ""},
		{ny, "2010-11-07 01:30:00", true, "2010-11-07 06:30:00.000000", false, true, ""},
		{ny, "0000-00-00 00:00:00", false, "0000-00-00 00:00:00.000000", false, false, ""},
	} {
		utc, gap := c.zone.ToUTC(fields(t, c.local), c.fold)
		if show(utc) != c.utc || gap != c.gap {
			t.Errorf("%s ToUTC(%s, fold=%v) = %s gap=%v, want %s gap=%v", c.zone.Name(), c.local, c.fold, show(utc), gap, c.utc, c.gap)
		}
		back, fold := c.zone.FromUTC(utc)
		want := c.backLocal
		if want == "" {
			want = show(fields(t, c.local))
		}
		if show(back) != want || fold != c.backFold {
			t.Errorf("%s FromUTC(%s) = %s fold=%v, want %s fold=%v", c.zone.Name(), c.utc, show(back), fold, want, c.backFold)
		}
	}
}

func TestTimestampRangeAndFold(t *testing.T) {
	for s, ok := range map[string]bool{
		"1970-01-01 00:00:00":        false,
		"1970-01-01 00:00:01":        true,
		"2038-01-19 03:14:07.999999": true,
		"2038-01-19 03:14:08":        false,
	} {
		if got := TimestampInRange(fields(t, s)); got != ok {
			t.Errorf("TimestampInRange(%s) = %v, want %v", s, got, ok)
		}
	}
	d := NewTime(fields(t, "2010-11-07 01:30:00.25"), mysql.TypeTimestamp, 2).WithFold(true)
	if !d.Fold() || d.Fsp() != 2 || d.String() != "2010-11-07 01:30:00.25" {
		t.Errorf("folded datum: fold=%v fsp=%d text=%s", d.Fold(), d.Fsp(), d.String())
	}
	if d.WithFold(false).Fold() {
		t.Errorf("WithFold(false) kept the mark")
	}
}

func TestConvertTZ(t *testing.T) {
	got := ConvertTZ(fields(t, "2010-01-01 00:00:00"), mustZone(t, "+01:00"), mustZone(t, "-02:30"))
	if show(got) != "2009-12-31 20:30:00.000000" {
		t.Errorf("CONVERT_TZ offsets = %s", show(got))
	}
	got = ConvertTZ(fields(t, "2010-03-14 02:30:00"), mustZone(t, "America/New_York"), UTC)
	if show(got) != "2010-03-14 07:00:00.000000" {
		t.Errorf("CONVERT_TZ in a gap = %s", show(got))
	}
}

// The later instant of an overlap sorts after the earlier one sharing its
// local time, and a literal (a DATETIME) names the earlier.
func TestCompareFold(t *testing.T) {
	f := fields(t, "2010-11-07 01:30:00")
	early := NewTime(f, mysql.TypeTimestamp, 0)
	late := early.WithFold(true)
	literal := NewString("2010-11-07 01:30:00")
	for _, c := range []struct {
		a, b Datum
		want int
	}{
		{early, late, -1},
		{late, early, 1},
		{late, late, 0},
		{early, literal, 0},
		{late, literal, 1},
		{literal, late, -1},
		{NewTime(f, mysql.TypeDatetime, 0).WithFold(true), literal, 0},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%s fold=%v, %s) = %d, want %d", c.a.String(), c.a.Fold(), c.b.String(), got, c.want)
		}
	}
}
