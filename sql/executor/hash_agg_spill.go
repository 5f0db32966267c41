package executor

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"os"

	"github.com/shoaldb/shoal/types"
)

// A hash aggregation over the memory quota keeps the groups it holds and
// updates them as before; the rows of any other group go, by a hash of
// their group key, to one of aggPartitions unlinked temporary files. Once
// the groups held are returned, each partition is aggregated in turn
// (each group's rows are all in one partition, in input order). A
// partition whose groups still outgrow the quota fails with 8175.

const aggPartitions = 64

type aggSpill struct {
	dir   string
	seed  maphash.Seed
	files [aggPartitions]*os.File
	ws    [aggPartitions]*bufio.Writer
	sizes [aggPartitions]int64
	next  int // the next partition to aggregate
	buf   []byte
}

func newAggSpill(dir string) *aggSpill {
	if dir == "" {
		dir = os.TempDir()
	}
	return &aggSpill{dir: dir, seed: maphash.MakeSeed()}
}

func (sp *aggSpill) write(key []byte, row types.Row) error {
	p := int(maphash.Bytes(sp.seed, key) % aggPartitions)
	if sp.files[p] == nil {
		if err := os.MkdirAll(sp.dir, 0o700); err != nil {
			return fmt.Errorf("aggregation spill: %w", err)
		}
		f, err := os.CreateTemp(sp.dir, "agg-*.part")
		if err != nil {
			return fmt.Errorf("aggregation spill: %w", err)
		}
		_ = os.Remove(f.Name())
		sp.files[p], sp.ws[p] = f, bufio.NewWriterSize(f, 64<<10)
	}
	sp.buf = appendSpillRow(sp.buf[:0], sortRow{row: row})
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(sp.buf)))
	if _, err := sp.ws[p].Write(hdr[:n]); err != nil {
		return fmt.Errorf("aggregation spill: %w", err)
	}
	if _, err := sp.ws[p].Write(sp.buf); err != nil {
		return fmt.Errorf("aggregation spill: %w", err)
	}
	sp.sizes[p] += int64(n + len(sp.buf))
	return nil
}

func (sp *aggSpill) close() {
	for i, f := range sp.files {
		if f != nil {
			f.Close()
			sp.files[i] = nil
		}
	}
}

// loadPartition drops the groups held and aggregates the next non-empty
// partition; false when none is left.
func (e *hashAggExec) loadPartition() (bool, error) {
	sp := e.spill
	for ; sp.next < aggPartitions; sp.next++ {
		if sp.files[sp.next] != nil {
			break
		}
	}
	if sp.next >= aggPartitions {
		return false, nil
	}
	p := sp.next
	sp.next++
	if err := sp.ws[p].Flush(); err != nil {
		return false, fmt.Errorf("aggregation spill: %w", err)
	}
	e.ctx.releaseMem(e.mem)
	e.mem = 0
	e.groups, e.pos, e.index = nil, 0, map[string]*aggGroup{}
	rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(sp.files[p], 0, sp.sizes[p]), 64<<10)}
	// The partition's rows belong to groups not returned yet; those held
	// now must fit (they cannot spill again).
	e.spill = nil
	defer func() { e.spill = sp }()
	for {
		r, ok, err := rr.next()
		if err != nil {
			return false, err
		}
		if !ok {
			break
		}
		if err := e.add(r.row, false); err != nil {
			return false, err
		}
	}
	sp.files[p].Close()
	sp.files[p] = nil
	return true, nil
}

// resetAggSpill drops spilled partitions and the memory count.
func (e *hashAggExec) resetAggSpill() {
	if e.spill != nil {
		e.spill.close()
		e.spill = nil
	}
	e.ctx.releaseMem(e.mem)
	e.mem = 0
}
