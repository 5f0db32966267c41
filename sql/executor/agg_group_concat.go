package executor

import (
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// GROUP_CONCAT's result is bounded by group_concat_max_len (bytes), as in
// MySQL: the value is cut there (on a character boundary), warning 1260
// names the row at which it was cut, and later rows of the group are
// skipped, so a huge group never holds more than the limit.

const defaultGroupConcatMaxLen = 1024

func (e *hashAggExec) groupConcatMaxLen() int {
	if e.gcMaxLen == 0 {
		e.gcMaxLen = defaultGroupConcatMaxLen
		if ec := e.ctx.Eval; ec != nil && ec.Session != nil {
			if d, ok := ec.Session.SysVar("group_concat_max_len"); ok {
				if n, _ := d.ToInt(); n > 0 {
					e.gcMaxLen = int(min(n, int64(^uint(0)>>1)))
				}
			}
		}
	}
	return e.gcMaxLen
}

func (e *hashAggExec) addGroupConcat(st *aggState, a *planner.AggDesc, row types.Row) error {
	if st.cut {
		return nil
	}
	vals := make([]types.Datum, len(a.Args))
	for i, x := range a.Args {
		w, err := x.Eval(e.ctx.Eval, row)
		if err != nil {
			return err
		}
		if w.IsNull() {
			return nil // a row with any NULL argument adds nothing
		}
		vals[i] = w
	}
	if st.has {
		st.buf = append(st.buf, a.Separator...)
	}
	st.has = true
	st.rows++
	for _, w := range vals {
		st.buf = w.AppendText(st.buf)
	}
	if limit := e.groupConcatMaxLen(); len(st.buf) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(st.buf[cut]) {
			cut--
		}
		st.buf = st.buf[:cut]
		st.cut = true
		e.ctx.Eval.AppendWarning(errno.New(mysql.ErrCutValueGroupConcat, "Row %d was cut by GROUP_CONCAT()", st.rows))
	}
	return nil
}
