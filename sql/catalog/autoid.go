package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/shoaldb/shoal/kv"
)

// autoIDStep is how many ids one persisted allocation reserves. A restart
// skips the unused rest of a step, as MySQL's and TiDB's allocators do.
const autoIDStep = 4000

type autoIDAllocator struct {
	mu   sync.Mutex
	next int64 // next id to hand out
	end  int64 // exclusive end of the reserved range
}

func (c *Catalog) allocator(tableID int64) *autoIDAllocator {
	c.allocMu.Lock()
	defer c.allocMu.Unlock()
	a := c.allocs[tableID]
	if a == nil {
		a = &autoIDAllocator{}
		c.allocs[tableID] = a
	}
	return a
}

// AllocAutoID returns n consecutive new ids for a table's AUTO_INCREMENT
// column (or hidden row id), the first of which is returned.
func (c *Catalog) AllocAutoID(ctx context.Context, tableID int64, n int64) (int64, error) {
	a := c.allocator(tableID)
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := c.InfoSchema().TableByID(tableID); t != nil && a.next < t.AutoIncFloor {
		// The persisted mark is at least the floor (RaiseAutoID, in the
		// same DDL): a new range starts there.
		a.next, a.end = 0, 0
	}
	if a.next+n > a.end || a.next == 0 {
		step := int64(autoIDStep)
		if n > step {
			step = n
		}
		base, err := c.reserve(ctx, tableID, a.end, step)
		if err != nil {
			return 0, err
		}
		a.next, a.end = base+1, base+1+step
	}
	first := a.next
	a.next += n
	return first, nil
}

// RebaseAutoID makes later allocations start above v (an explicit value was
// inserted into the AUTO_INCREMENT column).
func (c *Catalog) RebaseAutoID(ctx context.Context, tableID int64, v int64) error {
	a := c.allocator(tableID)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next != 0 && v < a.next {
		return nil
	}
	if a.next != 0 && v < a.end {
		a.next = v + 1
		return nil
	}
	base, err := c.reserve(ctx, tableID, v, autoIDStep)
	if err != nil {
		return err
	}
	if base < v {
		base = v
	}
	a.next, a.end = base+1, base+1+autoIDStep
	return nil
}

// reserve persists base+step as the new high-water mark, where base is the
// larger of the persisted mark and atLeast, and returns base.
func (c *Catalog) reserve(ctx context.Context, tableID, atLeast, step int64) (int64, error) {
	key := autoIDKey(tableID)
	for attempt := 0; ; attempt++ {
		txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
		if err != nil {
			return 0, err
		}
		var base int64
		v, err := txn.Get(ctx, key)
		if err == nil {
			base = int64(binary.BigEndian.Uint64(v))
		} else if !errors.Is(err, kv.ErrNotExist) {
			_ = txn.Rollback()
			return 0, err
		}
		if base < atLeast {
			base = atLeast
		}
		if err := txn.Set(key, u64(uint64(base+step))); err != nil {
			_ = txn.Rollback()
			return 0, err
		}
		err = txn.Commit(ctx)
		if err == nil {
			return base, nil
		}
		if !errors.Is(err, kv.ErrWriteConflict) || attempt > 10 {
			return 0, err
		}
	}
}

// ResetAutoID forgets the cached range of a table (TRUNCATE, DROP).
func (c *Catalog) ResetAutoID(tableID int64) {
	c.allocMu.Lock()
	delete(c.allocs, tableID)
	c.allocMu.Unlock()
}

// RaiseAutoID makes the persisted auto-increment mark of table tableID at
// least v, in the DDL transaction (ALTER TABLE ... AUTO_INCREMENT).
func (m *Mutator) RaiseAutoID(tableID, v int64) error {
	key := autoIDKey(tableID)
	cur, err := m.txn.Get(m.ctx, key)
	if err == nil && int64(binary.BigEndian.Uint64(cur)) >= v {
		return nil
	}
	if err != nil && !errors.Is(err, kv.ErrNotExist) {
		return err
	}
	return m.txn.Set(key, u64(uint64(v)))
}
