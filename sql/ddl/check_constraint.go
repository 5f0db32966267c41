package ddl

import (
	"context"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
)

// addCheck adds a CHECK constraint (ALTER TABLE ADD [CONSTRAINT [name]]
// CHECK (...) [NOT] ENFORCED). An enforced one must hold for every
// existing row (3819), read in the DDL's own transaction.
//
// It is a single-version change: a node still on the previous schema
// version does not check rows it writes meanwhile (an online job with a
// write-only state would close that window).
func (d *DDL) addCheck(ctx context.Context, tn *ast.TableName, c *ast.Constraint) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		if t.View != "" {
			return errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
		}
		nt := t.Clone()
		p := pendingExpr{kind: kindCheck, node: c.Expr, name: c.Name, notEnforced: !c.Enforced}
		if err := applyExprs(nt, []pendingExpr{p}, schemaCheckNames(m.Schema(), db.Name, nil)); err != nil {
			return err
		}
		if ck := nt.Checks[len(nt.Checks)-1]; !ck.NotEnforced {
			if err := validateRows(ctx, m.Txn(), nt, ck); err != nil {
				return err
			}
		}
		return m.PutTable(db, nt)
	})
}

// findCheck returns the index of t's check named name, -1 if none.
func findCheck(t *catalog.TableInfo, name string) int {
	for i, ck := range t.Checks {
		if strings.EqualFold(ck.Name, name) {
			return i
		}
	}
	return -1
}

// dropCheck removes a CHECK constraint (DROP CHECK / DROP CONSTRAINT,
// which the parser does not tell apart; only checks are named here).
func (d *DDL) dropCheck(ctx context.Context, tn *ast.TableName, name string) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		i := findCheck(t, name)
		if i < 0 {
			return errno.NewConstraint(errno.ErrCheckConstraintNotFound, name)
		}
		nt := t.Clone()
		nt.Checks = append(nt.Checks[:i], nt.Checks[i+1:]...)
		return m.PutTable(db, nt)
	})
}

// alterCheck sets a CHECK constraint [NOT] ENFORCED; enforcing one checks
// the existing rows first (3819), as MySQL does.
func (d *DDL) alterCheck(ctx context.Context, tn *ast.TableName, name string, enforced bool) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		i := findCheck(t, name)
		if i < 0 {
			return errno.NewConstraint(errno.ErrCheckConstraintNotFound, name)
		}
		nt := t.Clone()
		ck := nt.Checks[i]
		if ck.NotEnforced && enforced {
			if err := validateRows(ctx, m.Txn(), nt, ck); err != nil {
				return err
			}
		}
		ck.NotEnforced = !enforced
		return m.PutTable(db, nt)
	})
}

// validateRows fails with 3819 when a row of t read in txn breaks ck.
func validateRows(ctx context.Context, txn kv.Txn, t *catalog.TableInfo, ck *catalog.CheckInfo) error {
	e, err := planner.CompileRowExprText(t, ck.Expr)
	if err != nil {
		return err
	}
	evalCtx := &expression.Context{StmtTime: time.Now()}
	prefix := kv.Key(tablecodec.RecordPrefix(t.ID))
	it, err := txn.Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	for ; it.Valid(); err = it.Next() {
		if err != nil {
			return err
		}
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		row, err := executor.DecodeRecord(t, h.Clone(), it.Value())
		if err != nil {
			return err
		}
		v, err := e.Eval(evalCtx, row)
		if err != nil {
			return err
		}
		if ok, known := v.ToBool(); known && !ok {
			return errno.NewConstraint(errno.ErrCheckConstraintViolated, ck.Name)
		}
	}
	return err
}
