package executor

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"unsafe"

	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// A sort over the statement's memory quota writes its rows, sorted, as a
// run to a temporary file (unlinked at once, so nothing outlives the
// process) and goes on with empty memory; at the end the runs and the rows
// still in memory are merged. Rows are encoded with the memcomparable
// datum codec plus what it drops (a decimal's scale, a time's type and
// precision), so they come back exactly.

// sortSpill holds a sort's spilled runs.
type sortSpill struct {
	dir  string
	f    *os.File
	w    *bufio.Writer
	off  int64
	runs [][2]int64 // [start, end) offsets of each run
	buf  []byte
}

func (sp *sortSpill) writeRun(rows []sortRow, limit int64) error {
	if sp.f == nil {
		if err := os.MkdirAll(sp.dir, 0o700); err != nil {
			return fmt.Errorf("sort spill: %w", err)
		}
		f, err := os.CreateTemp(sp.dir, "sort-*.run")
		if err != nil {
			return fmt.Errorf("sort spill: %w", err)
		}
		_ = os.Remove(f.Name())
		sp.f, sp.w = f, bufio.NewWriterSize(f, 256<<10)
	}
	start := sp.off
	for i, r := range rows {
		if limit >= 0 && int64(i) >= limit {
			break
		}
		sp.buf = appendSpillRow(sp.buf[:0], r)
		var hdr [binary.MaxVarintLen64]byte
		n := binary.PutUvarint(hdr[:], uint64(len(sp.buf)))
		if _, err := sp.w.Write(hdr[:n]); err != nil {
			return fmt.Errorf("sort spill: %w", err)
		}
		if _, err := sp.w.Write(sp.buf); err != nil {
			return fmt.Errorf("sort spill: %w", err)
		}
		sp.off += int64(n + len(sp.buf))
	}
	if err := sp.w.Flush(); err != nil {
		return fmt.Errorf("sort spill: %w", err)
	}
	sp.runs = append(sp.runs, [2]int64{start, sp.off})
	return nil
}

func (sp *sortSpill) close() {
	if sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

func appendSpillRow(b []byte, r sortRow) []byte {
	b = binary.AppendUvarint(b, uint64(r.seq))
	b = binary.AppendUvarint(b, uint64(len(r.keys)))
	for _, d := range r.keys {
		b = appendSpillDatum(b, d)
	}
	b = binary.AppendUvarint(b, uint64(len(r.row)))
	for _, d := range r.row {
		b = appendSpillDatum(b, d)
	}
	return b
}

func appendSpillDatum(b []byte, d types.Datum) []byte {
	b = codec.AppendDatum(b, d)
	switch d.Kind() {
	case types.KindDecimal:
		b = append(b, byte(d.DecimalScale()))
	case types.KindTime:
		b = append(b, d.TimeType(), byte(d.Fsp()))
	case types.KindDuration:
		b = append(b, byte(d.Fsp()))
	}
	return b
}

func decodeSpillDatums(b []byte) (types.Row, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, codec.ErrCorrupt
	}
	b = b[k:]
	row := make(types.Row, n)
	for i := range row {
		d, rest, err := codec.DecodeOne(b)
		if err != nil {
			return nil, nil, err
		}
		b = rest
		switch d.Kind() {
		case types.KindDecimal:
			if len(b) < 1 {
				return nil, nil, codec.ErrCorrupt
			}
			d, _ = types.DecimalRound(d, int(b[0]), types.RoundHalfUp)
			b = b[1:]
		case types.KindTime:
			if len(b) < 2 {
				return nil, nil, codec.ErrCorrupt
			}
			d = types.NewTimeFromPacked(d.TimePacked(), b[0], int(b[1]))
			b = b[2:]
		case types.KindDuration:
			if len(b) < 1 {
				return nil, nil, codec.ErrCorrupt
			}
			d = types.NewDuration(d.DurationMicros(), int(b[0]))
			b = b[1:]
		}
		row[i] = d
	}
	return row, b, nil
}

func decodeSpillRow(b []byte) (sortRow, error) {
	seq, k := binary.Uvarint(b)
	if k <= 0 {
		return sortRow{}, codec.ErrCorrupt
	}
	keys, rest, err := decodeSpillDatums(b[k:])
	if err != nil {
		return sortRow{}, err
	}
	row, _, err := decodeSpillDatums(rest)
	if err != nil {
		return sortRow{}, err
	}
	return sortRow{keys: keys, row: row, seq: int(seq)}, nil
}

// runReader reads one spilled run back.
type runReader struct {
	r   *bufio.Reader
	buf []byte
}

func (rr *runReader) next() (sortRow, bool, error) {
	n, err := binary.ReadUvarint(rr.r)
	if err == io.EOF {
		return sortRow{}, false, nil
	}
	if err != nil {
		return sortRow{}, false, fmt.Errorf("sort spill: %w", err)
	}
	rr.buf = slices.Grow(rr.buf[:0], int(n))[:n]
	if _, err := io.ReadFull(rr.r, rr.buf); err != nil {
		return sortRow{}, false, fmt.Errorf("sort spill: %w", err)
	}
	r, err := decodeSpillRow(rr.buf)
	return r, err == nil, err
}

type mergeHead struct {
	row sortRow
	src int // index in readers, or -1 for the in-memory rows
}

// mergeHeap orders the sources of a merge by their current rows.
type mergeHeap struct {
	heads []mergeHead
	e     *sortExec
}

func (h *mergeHeap) Len() int { return len(h.heads) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.heads[i].row, h.heads[j].row
	if c := compareKeys(a.keys, b.keys, h.e.by); c != 0 {
		return c < 0
	}
	return cmp.Less(a.seq, b.seq)
}
func (h *mergeHeap) Swap(i, j int) { h.heads[i], h.heads[j] = h.heads[j], h.heads[i] }
func (h *mergeHeap) Push(x any)    { h.heads = append(h.heads, x.(mergeHead)) }
func (h *mergeHeap) Pop() any {
	x := h.heads[len(h.heads)-1]
	h.heads = h.heads[:len(h.heads)-1]
	return x
}

// startMerge spills nothing more: it opens a reader per run and heads the
// merge with each source's first row.
func (e *sortExec) startMerge() error {
	sp := e.spill
	e.mh = &mergeHeap{e: e}
	e.readers = e.readers[:0]
	for i, run := range sp.runs {
		rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(sp.f, run[0], run[1]-run[0]), 64<<10)}
		e.readers = append(e.readers, rr)
		r, ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			e.mh.heads = append(e.mh.heads, mergeHead{row: r, src: i})
		}
	}
	if len(e.rows) > 0 {
		e.mh.heads = append(e.mh.heads, mergeHead{row: e.rows[0], src: -1})
		e.pos = 1
	}
	heap.Init(e.mh)
	return nil
}

// nextMerged returns the next row in order, or nil at the end.
func (e *sortExec) nextMerged() (types.Row, error) {
	if e.mh.Len() == 0 {
		return nil, nil
	}
	top := e.mh.heads[0]
	var next sortRow
	ok := false
	if top.src < 0 {
		if e.pos < len(e.rows) {
			next, ok = e.rows[e.pos], true
			e.pos++
		}
	} else {
		var err error
		if next, ok, err = e.readers[top.src].next(); err != nil {
			return nil, err
		}
	}
	if ok {
		e.mh.heads[0].row = next
		heap.Fix(e.mh, 0)
	} else {
		heap.Pop(e.mh)
	}
	return top.row.row, nil
}

// minSpillBytes: an operator holding less neither spills nor fails over
// the quota (the quota is then tiny, or held by others), so runs are never
// trivially small and a small aggregation over a big one does not fail.
const minSpillBytes = 32 << 10

// sortRowSize is a sortRow's own size beyond its rows.
const sortRowSize = int64(unsafe.Sizeof(sortRow{}))

// spillRows sorts the rows held and writes them as a run (at most limit
// of them when limit >= 0), then holds none.
func (e *sortExec) spillRows(limit int64) error {
	if e.spill == nil {
		dir := e.ctx.SpillDir
		if dir == "" {
			dir = os.TempDir()
		}
		e.spill = &sortSpill{dir: dir}
	}
	e.sortHeld()
	if err := e.spill.writeRun(e.rows, limit); err != nil {
		return err
	}
	clear(e.rows)
	e.rows = e.rows[:0]
	e.ctx.releaseMem(e.mem)
	e.mem = 0
	return nil
}

// sortHeld sorts the rows in memory; seq breaks ties, so the unstable sort
// gives the stable order.
func (e *sortExec) sortHeld() {
	slices.SortFunc(e.rows, func(a, b sortRow) int {
		if c := compareKeys(a.keys, b.keys, e.by); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// resetSpill drops the spilled runs and the memory count.
func (e *sortExec) resetSpill() {
	if e.spill != nil {
		e.spill.close()
		e.spill = nil
	}
	e.mh, e.readers, e.emitted = nil, nil, 0
	e.ctx.releaseMem(e.mem)
	e.mem = 0
}
