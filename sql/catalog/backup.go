package catalog

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/shoaldb/shoal/kv"
)

// What backup and restore (package br) need from the catalog's storage
// layout, which stays private to this package.

// LoadSchema reads the schema as stored in r (a snapshot at some
// timestamp), independently of any Catalog's in-memory schema: a backup
// records the schema of its own timestamp.
func LoadSchema(ctx context.Context, r kv.Retriever) (*InfoSchema, error) {
	return (&Catalog{}).load(ctx, r)
}

// AutoIDMark returns the persisted high-water mark of table tableID's id
// allocator as r sees it (0 if it never allocated). Every auto-increment
// value and hidden row id allocated, and every explicit auto-increment
// value inserted (RebaseAutoID), in a transaction visible to r is at most
// the mark: ids are reserved in their own transaction, committed before
// the rows that use them.
func AutoIDMark(ctx context.Context, r kv.Retriever, tableID int64) (int64, error) {
	v, err := r.Get(ctx, autoIDKey(tableID))
	if errors.Is(err, kv.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// SetAutoIDMark persists mark as the high-water mark of table tableID's id
// allocator, so its allocations start above it (a restored table continues
// above the ids of its restored rows). Use it for a table this DDL creates.
func (m *Mutator) SetAutoIDMark(tableID, mark int64) error {
	return m.txn.Set(autoIDKey(tableID), u64(uint64(mark)))
}
