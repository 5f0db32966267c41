package executor

import (
	"errors"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

func execInsert(ctx *Context, p *planner.Insert) error {
	t := p.Table
	w := newWriter(ctx, t)
	hidden := !t.PKIsHandle && !t.CommonHandle
	width := len(t.Columns)
	if hidden {
		width++
	}
	var srcRows []types.Row
	if p.Select != nil {
		var err error
		if srcRows, err = drainPlan(ctx, p.Select); err != nil {
			return err
		}
	}
	n := len(p.Rows)
	if p.Select != nil {
		n = len(srcRows)
	}
	assigned := make([]bool, len(t.Columns))
	for _, off := range p.Targets {
		assigned[off] = true
	}
	// Rows are built a batch at a time, then the keys whose absence they
	// need are read in one request (the duplicate checks then find them in
	// the transaction's snapshot cache), then they are inserted in order.
	// A row that cannot be built ends the statement after the rows before
	// it went in, as if the rows were handled one by one.
	batch := make([]types.Row, 0, min(n, insertBatch))
	for first := 0; first < n; first += insertBatch {
		batch = batch[:0]
		var buildErr error
		for i := first; i < min(n, first+insertBatch); i++ {
			row, err := buildInsertRow(ctx, p, srcRows, assigned, width, hidden, n, i)
			if err != nil && p.Ignore && isCheckViolation(err) {
				ctx.Eval.AppendWarning(err)
				continue
			}
			if err != nil {
				buildErr = err
				break
			}
			batch = append(batch, row)
		}
		if len(batch) > 1 {
			if err := w.prefetchUnique(batch); err != nil {
				return err
			}
		}
		for j, row := range batch {
			if err := insertOne(ctx, w, p, row, first+j+1); err != nil {
				return err
			}
		}
		if buildErr != nil {
			return buildErr
		}
	}
	if ctx.InsertID != 0 {
		ctx.LastInsertID = ctx.InsertID
	}
	return nil
}

// insertBatch is how many rows of a multi-row INSERT are built and have
// their duplicate checks prefetched together.
const insertBatch = 256

// buildInsertRow evaluates row i of an INSERT: the given values (or the
// source row), defaults, auto-increment and the hidden row id.
func buildInsertRow(ctx *Context, p *planner.Insert, srcRows []types.Row, assigned []bool, width int, hidden bool, n, i int) (types.Row, error) {
	t := p.Table
	row := make(types.Row, width)
	rowNum := i + 1
	// exprDefaults are the columns taking their expression default, set
	// once every other value is in the row.
	var exprDefaults []int
	for j, off := range p.Targets {
		c := t.Columns[off]
		var v types.Datum
		var err error
		if p.Select != nil {
			v = srcRows[i][j]
		} else if e := p.Rows[i][j]; e == nil {
			if c.IsGenerated() {
				continue
			}
			if hasExprDefault(p.Exprs, off) {
				exprDefaults = append(exprDefaults, off)
				continue
			}
			v, err = DefaultValue(ctx, c, rowNum)
		} else {
			v, err = e.Eval(ctx.Eval, nil)
		}
		if err != nil {
			return nil, err
		}
		if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
			return nil, err
		}
		row[off] = v
	}
	for off, c := range t.Columns {
		if !assigned[off] {
			if c.IsGenerated() {
				continue
			}
			if hasExprDefault(p.Exprs, off) {
				exprDefaults = append(exprDefaults, off)
				continue
			}
			var v types.Datum
			var err error
			if c.Public() {
				v, err = DefaultValue(ctx, c, rowNum)
			} else {
				v = nonPublicDefault(ctx, c, rowNum)
			}
			if err != nil {
				return nil, err
			}
			row[off] = v
		}
	}
	slices.Sort(exprDefaults)
	for _, off := range exprDefaults {
		v, err := exprDefault(ctx, p.Exprs, t, off, row, rowNum)
		if err != nil {
			return nil, err
		}
		row[off] = v
	}
	if err := fillAutoInc(ctx, t, row); err != nil {
		return nil, err
	}
	if err := computeGenerated(ctx, p.Exprs, t, row, rowNum); err != nil {
		return nil, err
	}
	for off, c := range t.Columns {
		if row[off].IsNull() && (c.Type.NotNull() && c.Public() || c.PreventNull) {
			err := errno.NewStd(mysql.ErrBadNull, c.Name)
			// A column turning NOT NULL refuses NULL outright: a zero
			// stored for it would not be what the statement asked.
			if ctx.StrictMode || n == 1 || c.PreventNull {
				return nil, err
			}
			ctx.Eval.AppendWarning(err)
			row[off] = zeroValue(c)
		}
	}
	if hidden {
		id, err := ctx.Catalog.AllocAutoID(ctx.Ctx, t.ID, 1)
		if err != nil {
			return nil, err
		}
		row[width-1] = types.NewInt(id)
	}
	if err := checkRow(ctx, p.Exprs, row); err != nil {
		return nil, err
	}
	return row, nil
}

// nonPublicDefault is what an insert writes into a column readers do not
// see: its default, else NULL, or the type's zero value for a NOT NULL
// column (a column being dropped may have no default); never an error,
// as the statement could not have named the column.
func nonPublicDefault(ctx *Context, c *catalog.ColumnInfo, row int) types.Datum {
	if c.Default != nil {
		if v, err := DefaultValue(ctx, c, row); err == nil && !(v.IsNull() && c.Type.NotNull()) {
			return v
		}
	}
	if c.Type.NotNull() {
		return zeroValue(c)
	}
	return types.Datum{}
}

func fillAutoInc(ctx *Context, t *catalog.TableInfo, row types.Row) error {
	if t.AutoIncOffset < 0 {
		return nil
	}
	v := row[t.AutoIncOffset]
	// NO_AUTO_VALUE_ON_ZERO keeps an explicit 0: only NULL generates.
	zero := v.IsNull() || !ctx.SQLMode.Has(sqlmode.NoAutoValueOnZero) &&
		((v.Kind() == types.KindInt64 && v.Int() == 0) || (v.Kind() == types.KindUint64 && v.Uint() == 0))
	c := t.Columns[t.AutoIncOffset]
	if !zero {
		iv, _ := v.ToInt()
		if v.Kind() == types.KindUint64 {
			iv = int64(v.Uint())
		}
		if iv > 0 {
			return ctx.Catalog.RebaseAutoID(ctx.Ctx, t.ID, iv)
		}
		return nil
	}
	id, err := ctx.Catalog.AllocAutoID(ctx.Ctx, t.ID, 1)
	if err != nil {
		return err
	}
	if v := seriesValue(id, ctx.AutoIncIncrement, ctx.AutoIncOffset); v != id {
		if err := ctx.Catalog.RebaseAutoID(ctx.Ctx, t.ID, v); err != nil {
			return err
		}
		id = v
	}
	d, err := CastToColumn(ctx, types.NewInt(id), c, 0)
	if err != nil {
		return err
	}
	row[t.AutoIncOffset] = d
	if ctx.InsertID == 0 {
		ctx.InsertID = uint64(id)
	}
	return nil
}

func insertOne(ctx *Context, w *writer, p *planner.Insert, row types.Row, rowNum int) error {
	t := p.Table
	h, err := w.tc.handleOf(t, row, w.ctx.zone())
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := w.checkDup(row, h, false)
		var dup *dupError
		if err == nil {
			if err := w.addRow(row, h); err != nil {
				return err
			}
			ctx.AffectedRows++
			return nil
		}
		if !errors.As(err, &dup) {
			return err
		}
		switch {
		case p.Replace && attempt < 64:
			old, err := w.fetchRow(dup.handle)
			if err != nil {
				return err
			}
			if err := w.removeRow(old, dup.handle); err != nil {
				return err
			}
			ctx.AffectedRows++
			continue
		case len(p.OnDup) > 0:
			old, err := w.fetchRow(dup.handle)
			if err != nil {
				return err
			}
			evalRow := make(types.Row, 0, 2*len(t.Columns))
			evalRow = append(append(evalRow, old[:len(t.Columns)]...), row[:len(t.Columns)]...)
			nrow := append(types.Row(nil), old...)
			for _, a := range p.OnDup {
				c := t.Columns[a.Offset]
				var v types.Datum
				var err error
				switch {
				case a.Expr != nil:
					v, err = a.Expr.Eval(ctx.Eval, evalRow)
				case c.IsGenerated():
					continue // recomputed below
				case hasExprDefault(p.Exprs, a.Offset):
					v, err = p.Exprs.Defaults[a.Offset].Eval(ctx.Eval, nrow)
				default:
					v, err = DefaultValue(ctx, c, rowNum)
				}
				if err != nil {
					return err
				}
				if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
					return err
				}
				nrow[a.Offset] = v
				evalRow[a.Offset] = v
			}
			if err := finishRow(ctx, p.Exprs, t, nrow, rowNum); err != nil {
				if p.Ignore && isCheckViolation(err) {
					ctx.Eval.AppendWarning(err)
					return nil
				}
				return err
			}
			if rowsEqual(old, nrow) {
				return nil
			}
			if err := touchOnUpdate(ctx, t, p.OnDup, nrow, rowNum); err != nil {
				return err
			}
			if err := refreshAfterTouch(ctx, p.Exprs, t, nrow, rowNum); err != nil {
				return err
			}
			if err := w.updateRow(old, nrow); err != nil {
				return err
			}
			ctx.AffectedRows += 2
			return nil
		case p.Ignore:
			ctx.Eval.AppendWarning(dup.err)
			return nil
		}
		return dup.err
	}
}

// seriesValue is the first value at or above id of the series offset,
// offset+increment, ... that auto_increment_increment and
// auto_increment_offset ask generated ids to follow; an offset above the
// increment is ignored, as in MySQL.
func seriesValue(id, increment, offset int64) int64 {
	if increment <= 1 {
		return id
	}
	if offset < 1 || offset > increment {
		offset = 1
	}
	if id <= offset {
		return offset
	}
	return offset + (id-offset+increment-1)/increment*increment
}
