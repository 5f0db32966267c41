package executor

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"os"

	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// A hash join whose build (right) side outgrows the memory quota becomes a
// Grace hash join: the right rows held and those still to come go, by a
// hash of their join key, to joinPartitions unlinked temporary files, then
// the whole left side follows by the same hash. Each partition is then
// joined alone (its right rows in a hash table, its left rows streamed);
// rows with equal keys always meet in one partition. A partition whose
// right rows alone outgrow the quota is partitioned again with another hash
// seed, at most joinMaxRepartitions times (rows sharing one key cannot be
// split), then the statement fails with 8175. Right rows with a NULL key
// never match and are dropped; left rows with one are dropped by an inner
// join and kept (in partition 0, where they find no match) by a left join.
// Spilled, the output no longer follows the left side's order.

const (
	joinPartitions       = 32
	joinMaxRepartitions  = 3
	joinSpillWriteBuffer = 32 << 10
)

// rowFile is an unlinked temporary file of spilled rows.
type rowFile struct {
	f    *os.File
	w    *bufio.Writer
	size int64
}

func newRowFile(dir string) (*rowFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("join spill: %w", err)
	}
	f, err := os.CreateTemp(dir, "join-*.part")
	if err != nil {
		return nil, fmt.Errorf("join spill: %w", err)
	}
	_ = os.Remove(f.Name())
	return &rowFile{f: f, w: bufio.NewWriterSize(f, joinSpillWriteBuffer)}, nil
}

// write appends row, using buf as scratch; it returns buf for reuse.
func (rf *rowFile) write(row types.Row, buf []byte) ([]byte, error) {
	buf = appendSpillRow(buf[:0], sortRow{row: row})
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(buf)))
	if _, err := rf.w.Write(hdr[:n]); err != nil {
		return buf, fmt.Errorf("join spill: %w", err)
	}
	if _, err := rf.w.Write(buf); err != nil {
		return buf, fmt.Errorf("join spill: %w", err)
	}
	rf.size += int64(n + len(buf))
	return buf, nil
}

// reader flushes what was written and reads it from the start.
func (rf *rowFile) reader() (*runReader, error) {
	if err := rf.w.Flush(); err != nil {
		return nil, fmt.Errorf("join spill: %w", err)
	}
	return &runReader{r: bufio.NewReaderSize(io.NewSectionReader(rf.f, 0, rf.size), 64<<10)}, nil
}

func (rf *rowFile) close() {
	if rf != nil && rf.f != nil {
		rf.f.Close()
		rf.f = nil
	}
}

// joinPartition holds one partition's right (build) and left (probe) rows;
// either file is nil while it has no rows.
type joinPartition struct {
	build, probe *rowFile
	depth        int // how many times its rows were partitioned again
}

func (p *joinPartition) close() {
	p.build.close()
	p.probe.close()
}

// partitionSet sends rows to joinPartitions partitions by a seeded hash of
// their join key.
type partitionSet struct {
	dir   string
	seed  maphash.Seed
	parts [joinPartitions]*joinPartition
	buf   []byte
}

func newPartitionSet(dir string, depth int) *partitionSet {
	ps := &partitionSet{dir: dir, seed: maphash.MakeSeed()}
	for i := range ps.parts {
		ps.parts[i] = &joinPartition{depth: depth}
	}
	return ps
}

// add writes row to the build or probe file of the partition of key (nil
// key: partition 0).
func (ps *partitionSet) add(key []byte, row types.Row, build bool) error {
	p := ps.parts[0]
	if key != nil {
		p = ps.parts[maphash.Bytes(ps.seed, key)%joinPartitions]
	}
	file := &p.probe
	if build {
		file = &p.build
	}
	if *file == nil {
		rf, err := newRowFile(ps.dir)
		if err != nil {
			return err
		}
		*file = rf
	}
	var err error
	ps.buf, err = (*file).write(row, ps.buf)
	return err
}

func (ps *partitionSet) close() {
	for _, p := range ps.parts {
		p.close()
	}
}

// joinSpill is a spilled hash join's state: the partitions still to join
// (a stack, so a partition split again is finished first) and the left
// rows of the one being joined.
type joinSpill struct {
	dir     string
	pending []*joinPartition
	cur     *joinPartition
	probe   *runReader
	// keepsUnmatched: a left join, whose left rows without right rows
	// still produce a row.
	keepsUnmatched bool
}

func (sp *joinSpill) close() {
	for _, p := range sp.pending {
		p.close()
	}
	sp.pending = nil
	if sp.cur != nil {
		sp.cur.close()
		sp.cur = nil
	}
	sp.probe = nil
}

// joinKey evaluates a side's join key on row; null when a part is NULL
// (such a row matches nothing). The key is valid until the next call.
func (e *joinExec) joinKey(exprs []expression.Expr, row types.Row) (key []byte, null bool, err error) {
	if cap(e.keyVals) < len(exprs) {
		e.keyVals = make([]types.Datum, len(exprs))
	}
	vals := e.keyVals[:len(exprs)]
	for i, k := range exprs {
		if vals[i], err = k.Eval(e.ctx.Eval, row); err != nil {
			return nil, false, err
		}
		if vals[i].IsNull() {
			return nil, true, nil
		}
	}
	e.keyBuf = groupKey(e.keyBuf[:0], exprs, vals)
	return e.keyBuf, false, nil
}

// buildHashTable reads the right side into the hash table, counting it
// against the quota; over the quota it spills both sides to partitions and
// joins the first one.
func (e *joinExec) buildHashTable() error {
	if err := e.right.Open(); err != nil {
		e.right.Close()
		return err
	}
	defer e.right.Close()
	e.table = map[string][]types.Row{}
	var ps *partitionSet
	for {
		r, err := e.right.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		key, null, err := e.joinKey(e.plan.EqRight, r)
		if err != nil {
			return err
		}
		if null {
			continue
		}
		if ps != nil {
			if err := ps.add(key, r, true); err != nil {
				return err
			}
			continue
		}
		e.table[string(key)] = append(e.table[string(key)], r)
		n := rowMem(r) + 16
		e.mem += n
		if e.ctx.consumeMem(n) && e.mem >= minSpillBytes {
			if ps, err = e.spillHashTable(0); err != nil {
				return err
			}
		}
	}
	if ps == nil {
		return nil
	}
	// Every left row goes to its partition before any is joined.
	if err := e.partitionSide(ps, e.left.Next, false); err != nil {
		return err
	}
	e.spill.pushPartitions(ps)
	return nil
}

// spillHashTable starts partitioning (at depth): the rows of the hash table
// go to a new partition set, and the table's memory is released.
func (e *joinExec) spillHashTable(depth int) (*partitionSet, error) {
	if e.spill == nil {
		dir := e.ctx.SpillDir
		if dir == "" {
			dir = os.TempDir()
		}
		e.spill = &joinSpill{dir: dir, keepsUnmatched: e.plan.Type == planner.LeftJoin}
	}
	ps := newPartitionSet(e.spill.dir, depth)
	for key, rows := range e.table {
		for _, r := range rows {
			if err := ps.add([]byte(key), r, true); err != nil {
				ps.close()
				return nil, err
			}
		}
	}
	e.table = map[string][]types.Row{}
	e.ctx.releaseMem(e.mem)
	e.mem = 0
	return ps, nil
}

// partitionSide sends every row next returns to ps by its join key.
func (e *joinExec) partitionSide(ps *partitionSet, next func() (types.Row, error), build bool) error {
	exprs := e.plan.EqLeft
	if build {
		exprs = e.plan.EqRight
	}
	for {
		if err := e.interrupt.tick(e.ctx); err != nil {
			return err
		}
		r, err := next()
		if err != nil {
			return err
		}
		if r == nil {
			return nil
		}
		key, null, err := e.joinKey(exprs, r)
		if err != nil {
			return err
		}
		if null && (build || e.plan.Type != planner.LeftJoin) {
			continue
		}
		if err := ps.add(key, r, build); err != nil {
			return err
		}
	}
}

// pushPartitions queues the partitions of ps that can produce rows.
func (sp *joinSpill) pushPartitions(ps *partitionSet) {
	for _, p := range ps.parts {
		// Without left rows nothing is output; without right rows an inner
		// join outputs nothing either (a left join's probe remains).
		if p.probe == nil || (p.build == nil && !sp.keepsUnmatched) {
			p.close()
			continue
		}
		sp.pending = append(sp.pending, p)
	}
}

// nextSpilledLeft returns the next left row of the partition being joined,
// loading the next partition's right rows into the hash table as one ends;
// nil when all are joined.
func (e *joinExec) nextSpilledLeft() (types.Row, error) {
	sp := e.spill
	for {
		if sp.probe != nil {
			r, ok, err := sp.probe.next()
			if err != nil {
				return nil, err
			}
			if ok {
				return r.row, nil
			}
			sp.probe = nil
			sp.cur.close()
			sp.cur = nil
		}
		if len(sp.pending) == 0 {
			return nil, nil
		}
		p := sp.pending[len(sp.pending)-1]
		sp.pending = sp.pending[:len(sp.pending)-1]
		sp.cur = p
		loaded, err := e.loadPartition(p)
		if err != nil {
			return nil, err
		}
		if !loaded {
			sp.cur = nil
			continue
		}
		if sp.probe, err = p.probe.reader(); err != nil {
			return nil, err
		}
	}
}

// loadPartition puts p's right rows in the hash table; when they outgrow
// the quota it partitions p again (false) or fails at the bound.
func (e *joinExec) loadPartition(p *joinPartition) (bool, error) {
	e.table = map[string][]types.Row{}
	e.ctx.releaseMem(e.mem)
	e.mem = 0
	if p.build == nil {
		return true, nil
	}
	rr, err := p.build.reader()
	if err != nil {
		return false, err
	}
	for {
		r, ok, err := rr.next()
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
		key, _, err := e.joinKey(e.plan.EqRight, r.row)
		if err != nil {
			return false, err
		}
		e.table[string(key)] = append(e.table[string(key)], r.row)
		n := rowMem(r.row) + 16
		e.mem += n
		if e.ctx.consumeMem(n) && e.mem >= minSpillBytes {
			if p.depth >= joinMaxRepartitions {
				return false, e.ctx.errOverMem()
			}
			return false, e.repartition(p)
		}
	}
}

// repartition splits p with a new hash seed into partitions queued in its
// place.
func (e *joinExec) repartition(p *joinPartition) error {
	e.table = map[string][]types.Row{}
	e.ctx.releaseMem(e.mem)
	e.mem = 0
	ps := newPartitionSet(e.spill.dir, p.depth+1)
	for _, side := range []struct {
		f     *rowFile
		build bool
	}{{p.build, true}, {p.probe, false}} {
		rr, err := side.f.reader()
		if err != nil {
			ps.close()
			return err
		}
		next := func() (types.Row, error) {
			r, ok, err := rr.next()
			if !ok || err != nil {
				return nil, err
			}
			return r.row, nil
		}
		if err := e.partitionSide(ps, next, side.build); err != nil {
			ps.close()
			return err
		}
	}
	p.close()
	e.spill.pushPartitions(ps)
	return nil
}

// resetJoinSpill drops spilled partitions and the memory count.
func (e *joinExec) resetJoinSpill() {
	if e.spill != nil {
		e.spill.close()
		e.spill = nil
	}
	e.table = nil
	e.ctx.releaseMem(e.mem)
	e.mem = 0
}
