package session

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

func fieldsOf(cols []*planner.OutputColumn) []*Field {
	out := make([]*Field, 0, len(cols))
	for _, c := range cols {
		if c.Hidden {
			continue
		}
		ft := c.Ft
		if ft.Tp == mysql.TypeNull {
			ft.Tp = mysql.TypeNull
		}
		out = append(out, &Field{DBName: c.DB, Table: c.Table, OrgTable: c.OrgTable, Name: c.Name, OrgName: c.OrgName, Type: ft})
	}
	return out
}

func stringFields(names ...string) []*Field {
	out := make([]*Field, len(names))
	for i, n := range names {
		out[i] = &Field{Name: n, OrgName: n, Type: types.FieldType{Tp: mysql.TypeVarString, Flen: 256, Charset: "utf8mb4", Collate: "utf8mb4_bin"}}
	}
	return out
}

const defaultBatch = 256

// formatRow gives values the presentation their column type promises:
// a DECIMAL(p,s) column prints exactly s fraction digits whatever the scale
// of the value (1.5 read back from an index key, an integer SUM), and a
// DATE/DATETIME(fsp) column prints as its type (a value decoded from a key
// carries no type). Values already in shape are left alone (no work on the
// common path).
func formatRow(fields []*Field, row types.Row) {
	for i, f := range fields {
		if i >= len(row) {
			break
		}
		d := row[i]
		if d.IsNull() {
			continue
		}
		switch ft := &f.Type; {
		case ft.Tp == mysql.TypeNewDecimal:
			if ft.Decimal < 0 || ft.Decimal > types.MaxDecimalScale {
				continue
			}
			if d.Kind() == types.KindDecimal && d.DecimalScale() == ft.Decimal {
				continue
			}
			if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
				continue
			}
			x, _ := d.ToDecimal()
			row[i], _ = types.DecimalRound(x, ft.Decimal, types.RoundHalfUp)
		case ft.IsTime():
			if d.Kind() == types.KindTime && (d.TimeType() != ft.Tp || d.Fsp() != max(ft.Decimal, 0)) {
				row[i] = d.WithTimeType(ft.Tp, max(ft.Decimal, 0))
			}
		case ft.Tp == mysql.TypeDuration:
			if d.Kind() == types.KindDuration && d.Fsp() != max(ft.Decimal, 0) {
				row[i] = types.NewDuration(d.DurationMicros(), max(ft.Decimal, 0))
			}
		}
	}
}

// execResultSet streams an executor's rows.
type execResultSet struct {
	s      *Session
	ctx    context.Context // the statement's: says why it was interrupted
	fields []*Field
	exec   executor.Executor
	done   func()
	closed bool
}

func (r *execResultSet) Fields() []*Field { return r.fields }

func (r *execResultSet) Next(ctx context.Context, rows *[]types.Row) error {
	*rows = (*rows)[:0]
	n := cap(*rows)
	if n == 0 {
		n = defaultBatch
	}
	for len(*rows) < n {
		row, err := r.exec.Next()
		if err != nil {
			err = interruptedErr(r.ctx, toSQLError(err))
			r.s.collectWarnings()
			r.s.addError(err)
			return err
		}
		if row == nil {
			break
		}
		if len(row) > len(r.fields) {
			row = row[:len(r.fields)]
		}
		formatRow(r.fields, row)
		*rows = append(*rows, row)
	}
	return nil
}

func (r *execResultSet) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.exec.Close()
	r.s.collectWarnings()
	if r.done != nil {
		r.done()
	}
	return err
}

// staticResultSet serves rows already computed.
type staticResultSet struct {
	fields []*Field
	rows   []types.Row
	pos    int
}

func (r *staticResultSet) Fields() []*Field { return r.fields }
func (r *staticResultSet) Next(ctx context.Context, rows *[]types.Row) error {
	*rows = (*rows)[:0]
	n := cap(*rows)
	if n == 0 {
		n = defaultBatch
	}
	for len(*rows) < n && r.pos < len(r.rows) {
		row := r.rows[r.pos]
		if len(row) > len(r.fields) {
			row = row[:len(r.fields)]
		}
		formatRow(r.fields, row)
		*rows = append(*rows, row)
		r.pos++
	}
	return nil
}
func (r *staticResultSet) Close() error { return nil }

// materialize reads a result set to the end.
func materialize(ctx context.Context, rs ResultSet) (ResultSet, error) {
	defer rs.Close()
	out := &staticResultSet{fields: rs.Fields()}
	var batch []types.Row
	for {
		if err := rs.Next(ctx, &batch); err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return out, nil
		}
		for _, r := range batch {
			cp := make(types.Row, len(r))
			for i, d := range r {
				cp[i] = d.Clone()
			}
			out.rows = append(out.rows, cp)
		}
	}
}

// releaseOnClose runs release when rs closes (at once when there is no
// streaming result set to wait for).
func releaseOnClose(rs ResultSet, release func()) ResultSet {
	if release == nil {
		return rs
	}
	if ers, ok := rs.(*execResultSet); ok {
		done := ers.done
		ers.done = func() {
			if done != nil {
				done()
			}
			release()
		}
		return rs
	}
	release()
	return rs
}
