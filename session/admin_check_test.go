package session

import (
	"context"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// ADMIN CHECK TABLE reports an index entry without a row, and one pointing
// at the wrong row, as errors (it used to read the closed iterator's key
// for the message and panic).
func TestAdminCheckReportsOrphanEntries(t *testing.T) {
	st, _ := openProbe(t)
	b := newNode(t, st, Config{})
	s := newSess(t, b)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ia (a))")
	mustExec(t, s, "INSERT INTO t VALUES (1, 10), (2, 20)")
	mustExec(t, s, "ADMIN CHECK TABLE t")
	tb := b.catalog.InfoSchema().Table("test", "t")
	idx := tb.FindIndex("ia")
	ctx := context.Background()
	write := func(k, v []byte) {
		t.Helper()
		txn, err := st.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
		if err != nil {
			t.Fatal(err)
		}
		if v == nil {
			err = txn.Delete(k)
		} else {
			err = txn.Set(k, v)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	orphan, val := tablecodec.EncodeIndexEntry(nil, nil, tb.ID, idx.ID, false, []types.Datum{types.NewInt(30)}, tablecodec.IntHandle(3))
	write(orphan, val)
	if _, err := s.Execute(ctx, "ADMIN CHECK TABLE t"); err == nil || !strings.Contains(err.Error(), "with no row") {
		t.Fatalf("ADMIN CHECK with an orphan index entry: %v", err)
	}
	write(orphan, nil)
	mustExec(t, s, "ADMIN CHECK TABLE t")
}
