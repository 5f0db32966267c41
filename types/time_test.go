package types

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

func TestParseTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		tp   byte
		fsp  int
		want string
	}{
		{"2024-01-02", mysql.TypeDate, 0, "2024-01-02"},
		{"2024-01-02", mysql.TypeDatetime, 0, "2024-01-02 00:00:00"},
		{"2024-01-02 03:04:05", mysql.TypeDatetime, 0, "2024-01-02 03:04:05"},
		{"2024-01-02 03:04:05.123", mysql.TypeDatetime, 3, "2024-01-02 03:04:05.123"},
		{"2024-01-02 03:04:05.123", mysql.TypeDatetime, 6, "2024-01-02 03:04:05.123000"},
		{"2024-01-02 03:04:05.5", mysql.TypeDatetime, 0, "2024-01-02 03:04:06"},
		{"2024-12-31 23:59:59.9999999", mysql.TypeDatetime, 6, "2025-01-01 00:00:00.000000"},
		{"2024-01-02T03:04:05", mysql.TypeDatetime, 0, "2024-01-02 03:04:05"},
		{"2024/1/2 3:4:5", mysql.TypeDatetime, 0, "2024-01-02 03:04:05"},
		{"24-01-02", mysql.TypeDate, 0, "2024-01-02"},
		{"99-01-02", mysql.TypeDate, 0, "1999-01-02"},
		{"20240102", mysql.TypeDate, 0, "2024-01-02"},
		{"20240102030405", mysql.TypeDatetime, 0, "2024-01-02 03:04:05"},
		{"240102", mysql.TypeDate, 0, "2024-01-02"},
		{"0000-00-00", mysql.TypeDate, 0, "0000-00-00"},
		{"0000-00-00 00:00:00", mysql.TypeDatetime, 0, "0000-00-00 00:00:00"},
		{"2024-02-29 10:00:00", mysql.TypeTimestamp, 0, "2024-02-29 10:00:00"},
		{"2024-01-02 03:04:05", mysql.TypeDate, 0, "2024-01-02"},
	} {
		d, err := ParseTime(c.in, c.tp, c.fsp)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", c.in, err)
			continue
		}
		if got := d.String(); got != c.want {
			t.Errorf("ParseTime(%q) = %s want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "abc", "2023-02-29", "2024-13-01", "2024-01-32", "2024-01-02 24:00:00", "2024-01-02 10:60:00", "2024-01", "1234567"} {
		if d, err := ParseTime(bad, mysql.TypeDatetime, 0); err == nil {
			t.Errorf("ParseTime(%q) = %s, want error", bad, d)
		}
	}
}

func TestNumberToTime(t *testing.T) {
	for _, c := range []struct {
		in   Datum
		want string
	}{
		{NewInt(20240102), "2024-01-02 00:00:00"},
		{NewInt(20240102030405), "2024-01-02 03:04:05"},
		{NewInt(240102), "2024-01-02 00:00:00"},
		{NewInt(991231), "1999-12-31 00:00:00"},
		{NewFloat(20240102030405.5), "2024-01-02 03:04:05.500000"},
		{mustDec("20240102030405.123456"), "2024-01-02 03:04:05.123456"},
	} {
		d, err := c.in.ToTime(mysql.TypeDatetime, 6)
		if c.in.Kind() == KindInt64 {
			d, err = c.in.ToTime(mysql.TypeDatetime, 0)
		}
		if err != nil || d.String() != c.want {
			t.Errorf("ToTime(%s) = %s, %v; want %s", c.in, d, err, c.want)
		}
	}
	if _, err := NewInt(20241301).ToTime(mysql.TypeDate, 0); err == nil {
		t.Error("20241301 accepted")
	}
}

func mustDec(s string) Datum { d, _ := ParseDecimal(s); return d }

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		fsp  int
		want string
	}{
		{"03:04:05", 0, "03:04:05"},
		{"-03:04:05.5", 1, "-03:04:05.5"},
		{"838:59:59", 0, "838:59:59"},
		{"1 02:00:00", 0, "26:00:00"},
		{"030405", 0, "03:04:05"},
		{"45", 0, "00:00:45"},
		{"10:30", 0, "10:30:00"},
		{"2024-01-02 03:04:05", 0, "03:04:05"},
		{"00:00:01.9999999", 6, "00:00:02.000000"},
	} {
		d, err := ParseDuration(c.in, c.fsp)
		if err != nil || d.String() != c.want {
			t.Errorf("ParseDuration(%q) = %s, %v; want %s", c.in, d, err, c.want)
		}
	}
	if d, err := ParseDuration("900:00:00", 0); err != ErrDurationRange || d.String() != "838:59:59" {
		t.Errorf("clip: %s %v", d, err)
	}
	if d, _ := NewInt(30405).ToDuration(0); d.String() != "03:04:05" {
		t.Errorf("int to duration: %s", d)
	}
}

func TestTimeCompare(t *testing.T) {
	a, _ := ParseTime("2024-01-02 03:04:05", mysql.TypeDatetime, 0)
	day, _ := ParseTime("2024-01-02", mysql.TypeDate, 0)
	mid, _ := ParseTime("2024-01-02 00:00:00", mysql.TypeDatetime, 0)
	for _, c := range []struct {
		a, b Datum
		want int
	}{
		{a, NewString("2024-01-02 03:04:05"), 0},
		{a, NewString("2024-1-2 3:4:5"), 0},
		{a, NewString("2024-01-02 03:04:06"), -1},
		{a, NewString("2024-01-02"), 1},
		{day, mid, 0},
		{day, NewString("2024-01-02"), 0},
		{a, NewInt(20240102030405), 0},
		{NewString("2025-01-01"), a, 1},
		{a, day, 1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%s,%s)=%d want %d", c.a, c.b, got, c.want)
		}
	}
	if a.ToFloat() != 20240102030405 {
		t.Errorf("ToFloat %v", a.ToFloat())
	}
	d1, _ := ParseDuration("10:00:00", 0)
	if Compare(d1, NewString("09:59:59")) != 1 || Compare(d1, NewString("10:00:00")) != 0 {
		t.Error("duration compare")
	}
}
