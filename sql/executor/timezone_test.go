package executor

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// A TIMESTAMP read from storage and written back unchanged keeps its
// instant, in a DST overlap too; other types are never converted.
func TestStoredTimeRoundTrip(t *testing.T) {
	ny, err := types.LoadTimeZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tsType := &types.FieldType{Tp: mysql.TypeTimestamp}
	for _, utc := range []string{"2010-11-07 05:30:00", "2010-11-07 06:30:00", "2010-03-14 07:00:00", "2020-06-30 23:59:59.5"} {
		stored, err := types.ParseTime(utc, mysql.TypeTimestamp, 1)
		if err != nil {
			t.Fatal(err)
		}
		local := fromStoredTime(stored, ny)
		back := toStoredTime(local, tsType, ny)
		if back.TimePacked() != stored.TimePacked() {
			t.Errorf("%s: read as %s (fold %v), written back as %s", utc, local.String(), local.Fold(), back.String())
		}
	}
	dt, _ := types.ParseTime("2010-11-07 01:30:00", mysql.TypeDatetime, 0)
	if got := toStoredTime(dt, &types.FieldType{Tp: mysql.TypeDatetime}, ny); got.TimePacked() != dt.TimePacked() {
		t.Errorf("a DATETIME was converted: %s", got.String())
	}
}

// castTimestamp checks the instant's range in the session's zone and
// refuses or moves a local time in a DST gap by sql_mode.
func TestCastTimestampZone(t *testing.T) {
	col := &catalog.ColumnInfo{Name: "t", Type: types.FieldType{Tp: mysql.TypeTimestamp}}
	plus5, _ := types.LoadTimeZone("+05:00")
	ny, _ := types.LoadTimeZone("America/New_York")
	cases := []struct {
		zone   *types.TimeZone
		in     string
		strict bool
		want   string // "" for an error
		warns  int
	}{
		{plus5, "1970-01-01 05:00:01", true, "1970-01-01 05:00:01", 0},
		{plus5, "1970-01-01 05:00:00", true, "", 0},
		{plus5, "1970-01-01 05:00:00", false, "0000-00-00 00:00:00", 1},
		{types.UTC, "2038-01-19 03:14:07", true, "2038-01-19 03:14:07", 0},
		{plus5, "2038-01-19 03:14:08", true, "2038-01-19 03:14:08", 0},
		{ny, "2010-03-14 02:30:00", true, "", 0},
		{ny, "2010-03-14 02:30:00", false, "2010-03-14 03:00:00", 1},
	}
	for _, c := range cases {
		ctx := &Context{Eval: &expression.Context{TimeZone: c.zone}, StrictMode: c.strict}
		got, err := CastToColumn(ctx, types.NewString(c.in), col, 1)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s %s strict=%v: got %s, want an error", c.zone.Name(), c.in, c.strict, got.String())
		case c.want != "" && (err != nil || got.String() != c.want || len(ctx.Eval.Warnings) != c.warns):
			t.Errorf("%s %s strict=%v: got %s, %v, %d warnings; want %s, %d warnings", c.zone.Name(), c.in, c.strict, got.String(), err, len(ctx.Eval.Warnings), c.want, c.warns)
		}
	}
}
