package executor

import (
	"context"
	"fmt"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// CheckTable verifies that every stored index of t holds exactly the
// entries implied by t's rows, as read by txn.
func CheckTable(ctx context.Context, txn kv.Txn, t *catalog.TableInfo) error {
	tc := codecOf(t)
	extra := !t.PKIsHandle && !t.CommonHandle
	idxs := t.StoredIndices()
	want := make([]map[string]string, len(idxs))
	for i := range want {
		want[i] = map[string]string{}
	}
	prefix := kv.Key(tablecodec.RecordPrefix(t.ID))
	it, err := txn.Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	rows := 0
	for it.Valid() {
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		h = h.Clone()
		row, err := tc.decodeRow(t, h, it.Value(), extra)
		if err != nil {
			it.Close()
			return err
		}
		for i, idx := range idxs {
			k, v := tablecodec.EncodeIndexEntry(nil, nil, t.ID, idx.ID, idx.Unique, indexValues(t, idx, row), h)
			want[i][string(k)] = string(v)
		}
		rows++
		if err := it.Next(); err != nil {
			it.Close()
			return err
		}
	}
	it.Close()
	for i, idx := range idxs {
		p := kv.Key(tablecodec.IndexPrefix(t.ID, idx.ID))
		it, err := txn.Iter(ctx, p, p.PrefixNext())
		if err != nil {
			return err
		}
		n := 0
		for it.Valid() {
			key := []byte(it.Key())
			v, ok := want[i][string(key)]
			if !ok {
				err := fmt.Errorf("index %s has an entry %x with no row", idx.Name, key)
				it.Close()
				return err
			}
			if v != string(it.Value()) {
				err := fmt.Errorf("index %s entry %x points at the wrong row", idx.Name, key)
				it.Close()
				return err
			}
			n++
			if err := it.Next(); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		if n != len(want[i]) {
			return fmt.Errorf("index %s has %d entries, the table %d rows need %d", idx.Name, n, rows, len(want[i]))
		}
	}
	return nil
}
