package expression

import (
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

func init() {
	builtins["sleep"] = builtin{1, 1, evalSleep, intType, true}
}

// evalSleep is SLEEP(seconds): 0 after sleeping, 1 when the statement was
// interrupted meanwhile (KILL QUERY, max_execution_time), as MySQL. The
// interrupted statement then fails at its next look at its context (a
// statement that is only the SLEEP returns the 1, as MySQL's does).
// A NULL or negative argument is an error, as in MySQL's strict mode (the
// default); shoal does not give the non-strict warning instead.
func evalSleep(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return types.Datum{}, err
	}
	secs := d.ToFloat()
	if d.IsNull() || secs < 0 {
		return types.Datum{}, errno.New(mysql.ErrWrongArguments, "Incorrect arguments to sleep")
	}
	dur := time.Duration(secs * float64(time.Second))
	if ctx == nil || ctx.Ctx == nil {
		time.Sleep(dur)
		return types.NewInt(0), nil
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return types.NewInt(0), nil
	case <-ctx.Ctx.Done():
		return types.NewInt(1), nil
	}
}
