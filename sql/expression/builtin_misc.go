package expression

import (
	"time"

	"github.com/google/uuid"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

func init() {
	registerBuiltins("misc", map[string]builtin{
		"sleep": {1, 1, evalSleep, intType, true},
		"uuid":  {0, 0, evalUUID, uuidType, true},
	})
}

// evalSleep is SLEEP(seconds): 0 after sleeping, 1 when the statement was
// interrupted meanwhile (KILL QUERY, max_execution_time), as MySQL. The
// interrupted statement then fails at its next look at its context (a
// statement that is only the SLEEP returns the 1, as MySQL's does).
// A NULL or negative argument is an error in strict SQL mode, else a
// warning and 0, as in MySQL.
func evalSleep(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return types.Datum{}, err
	}
	secs := d.ToFloat()
	if d.IsNull() || secs < 0 {
		err := errno.New(mysql.ErrWrongArguments, "Incorrect arguments to sleep")
		if ctx == nil || ctx.Strict {
			return types.Datum{}, err
		}
		ctx.AppendWarning(err)
		return types.NewInt(0), nil
	}
	secs = min(secs, 365*24*3600) // a year: no Duration overflow
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

// evalUUID is UUID(): a time-based (version 1) UUID, as MySQL's, in its
// 36-character text form.
func evalUUID(*Context, *ScalarFunc, types.Row) (types.Datum, error) {
	u, err := uuid.NewUUID()
	if err != nil {
		return types.Datum{}, err
	}
	return types.NewString(u.String()), nil
}

func uuidType([]Expr) types.FieldType {
	return types.FieldType{Tp: mysql.TypeVarString, Flen: 36, Charset: "utf8mb4", Collate: "utf8mb4_0900_ai_ci"}
}
