package executor

import (
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// Under sql_mode TIME_TRUNCATE_FRACTIONAL a fraction of a second beyond a
// TIME/DATETIME/TIMESTAMP column's precision is cut rather than rounded:
// the value is read at full precision, then cut to the column's.

func (ctx *Context) truncatesFraction() bool {
	return ctx.SQLMode.Has(sqlmode.TimeTruncateFractional)
}

// readFsp is the precision to read a value bound for a column of fsp.
func (ctx *Context) readFsp(fsp int) int {
	if ctx.truncatesFraction() {
		return types.MaxFsp
	}
	return fsp
}

// fractionUnit is the number of microseconds one unit of the last of fsp
// fraction digits stands for.
func fractionUnit(fsp int) int64 {
	u := int64(1)
	for i := fsp; i < types.MaxFsp; i++ {
		u *= 10
	}
	return u
}

// truncateTime cuts a DATE/DATETIME/TIMESTAMP datum to fsp digits.
func truncateTime(v types.Datum, tp byte, fsp int) types.Datum {
	f := v.TimeFields()
	f.Micro -= f.Micro % int(fractionUnit(fsp))
	return types.NewTime(f, tp, fsp)
}

// truncateDuration cuts a TIME datum to fsp digits (toward zero).
func truncateDuration(v types.Datum, fsp int) types.Datum {
	us := v.DurationMicros()
	return types.NewDuration(us-us%fractionUnit(fsp), fsp)
}
