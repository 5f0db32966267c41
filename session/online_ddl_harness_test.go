package session_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// doOnlineDDL handles the datadriven directives about online schema
// changes (tables of database test):
//
//	interrupt-ddl state=<state>
//	                the next schema change (not a rollback) stops when its
//	                object reaches state (delete-only or write-only), as if
//	                its node died there; the DDL statement fails and the
//	                job stays in the table for the next DDL to settle.
//	interrupt-ddl off
//	schema-state table=<t>
//	                every column and index of t with its state when not
//	                public, and the job under way.
//	index-entries table=<t> index=<i>
//	                the entries of index i (in any state) in kv now, one
//	                "values -> handle" line each.
//	raw-rows table=<t>
//	                every row as stored, with every column in any state
//	                ("-": the row value does not hold the column).
func (h *harness) doOnlineDDL(t *testing.T, d *datadriven.TestData) (string, bool) {
	switch d.Cmd {
	case "interrupt-ddl":
		if d.HasArg("off") {
			ddl.SetJobInterrupt(nil)
			return "", true
		}
		var want string
		d.ScanArgs(t, "state", &want)
		fired := false
		ddl.SetJobInterrupt(func(tb *catalog.TableInfo) bool {
			j := tb.Job
			if fired || j.RollingBack || jobObjectState(tb).String() != want {
				return false
			}
			fired = true
			return true
		})
		t.Cleanup(func() { ddl.SetJobInterrupt(nil) })
		return "", true
	case "schema-state":
		tb := h.table(t, d)
		var b strings.Builder
		var cols, idxs []string
		for _, c := range tb.Columns {
			cols = append(cols, withState(c.Name, c.State))
		}
		for _, idx := range tb.Indices {
			idxs = append(idxs, withState(idx.Name, idx.State))
		}
		fmt.Fprintf(&b, "columns: %s\nindexes: %s\n", strings.Join(cols, ", "), strings.Join(idxs, ", "))
		if j := tb.Job; j != nil {
			owner := "none"
			if j.Owner == session.CatalogOf(h.backend).NodeID() {
				owner = "this node"
			} else if j.Owner != "" {
				owner = "another node"
			}
			fmt.Fprintf(&b, "job: %s, owner %s", j.Kind, owner)
			if j.RollingBack {
				b.WriteString(", rolling back")
			}
			b.WriteString("\n")
		}
		return b.String(), true
	case "index-entries":
		tb := h.table(t, d)
		var name string
		d.ScanArgs(t, "index", &name)
		var idx *catalog.IndexInfo
		for _, x := range tb.Indices {
			if strings.EqualFold(x.Name, name) {
				idx = x
			}
		}
		if idx == nil {
			return fmt.Sprintf("no index %s\n", name), true
		}
		return h.indexEntries(t, tb, idx), true
	case "raw-rows":
		return h.rawRows(t, h.table(t, d)), true
	}
	return "", false
}

func (h *harness) rawRows(t *testing.T, tb *catalog.TableInfo) string {
	store := session.StoreOf(h.backend)
	ts, err := store.CurrentTS(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]tablecodec.RowColumn, len(tb.Columns))
	names := make([]string, len(tb.Columns))
	for i, c := range tb.Columns {
		fromHandle := tb.PKIsHandle && tb.HandleColumn() == c
		cols[i] = tablecodec.RowColumn{ID: c.ID, Type: &c.Type, FromHandle: fromHandle, Default: types.NewString("-")}
		names[i] = c.Name
	}
	dec := tablecodec.NewRowDecoder(cols)
	prefix := kv.Key(tablecodec.RecordPrefix(tb.ID))
	it, err := store.GetSnapshot(ts).Iter(h.ctx, prefix, prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	lines := []string{strings.Join(names, "\t")}
	for it.Valid() {
		_, hd, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		row := make([]types.Datum, len(cols))
		if err := dec.Decode(it.Value(), hd, row); err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(row))
		for i, v := range row {
			if v.IsNull() {
				texts[i] = "NULL"
			} else {
				texts[i] = string(v.AppendText(nil))
			}
		}
		lines = append(lines, strings.Join(texts, "\t"))
		if err := it.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func withState(name string, st catalog.SchemaState) string {
	if st == catalog.StatePublic {
		return name
	}
	return fmt.Sprintf("%s (%s)", name, st)
}

// jobObjectState is the state of the first object of tb's job.
func jobObjectState(tb *catalog.TableInfo) catalog.SchemaState {
	j := tb.Job
	if j.Kind == ddl.JobAddIndex || j.Kind == ddl.JobDropIndex {
		return tb.IndexByID(j.Objects[0]).State
	}
	return tb.ColumnByID(j.Objects[0]).State
}

func (h *harness) table(t *testing.T, d *datadriven.TestData) *catalog.TableInfo {
	var name string
	d.ScanArgs(t, "table", &name)
	tb := session.CatalogOf(h.backend).InfoSchema().Table("test", name)
	if tb == nil {
		d.Fatalf(t, "no table test.%s", name)
	}
	return tb
}

func (h *harness) indexEntries(t *testing.T, tb *catalog.TableInfo, idx *catalog.IndexInfo) string {
	store := session.StoreOf(h.backend)
	ts, err := store.CurrentTS(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	prefix := kv.Key(tablecodec.IndexPrefix(tb.ID, idx.ID))
	it, err := store.GetSnapshot(ts).Iter(h.ctx, prefix, prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var lines []string
	for it.Valid() {
		vals := make([]types.Datum, len(idx.Columns))
		hd, _, err := tablecodec.DecodeIndexKV(it.Key(), it.Value(), vals, nil)
		if err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(vals))
		for i, v := range vals {
			if v.IsNull() {
				texts[i] = "NULL"
			} else {
				texts[i] = string(v.AppendText(nil))
			}
		}
		lines = append(lines, fmt.Sprintf("%s -> %s", strings.Join(texts, ","), hd.String()))
		if err := it.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) == 0 {
		return "no entries\n"
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
