package session

import (
	"context"
	"strconv"

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

// formatRow turns values that the engine keeps in another kind into what
// the column type promises on the wire (DECIMAL results computed in
// floating point print with the type's scale).
func formatRow(fields []*Field, row types.Row) {
	for i, f := range fields {
		if i >= len(row) {
			break
		}
		d := row[i]
		if f.Type.Tp == mysql.TypeNewDecimal {
			switch d.Kind() {
			case types.KindFloat64:
				row[i] = types.NewString(strconv.FormatFloat(d.Float(), 'f', max(f.Type.Decimal, 0), 64))
			case types.KindInt64, types.KindUint64:
				if f.Type.Decimal > 0 {
					row[i] = types.NewString(strconv.FormatFloat(d.ToFloat(), 'f', f.Type.Decimal, 64))
				}
			}
		}
	}
}

// execResultSet streams an executor's rows.
type execResultSet struct {
	s      *Session
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
			return toSQLError(err)
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
