package executor

import (
	"testing"

	"github.com/shoaldb/shoal/types"
)

// Rows carved from one chunk are zeroed, do not overlap, and an append to
// one never writes into the next.
func TestRowAllocRowsAreIndependent(t *testing.T) {
	var a rowAlloc
	var rows []types.Row
	for i := range 3 * rowAllocChunk / 5 { // several chunks of width-5 rows
		r := a.row(5)
		if len(r) != 5 || cap(r) != 5 {
			t.Fatalf("row %d: len %d cap %d, want 5 and 5", i, len(r), cap(r))
		}
		for j := range r {
			if !r[j].IsNull() {
				t.Fatalf("row %d col %d not zeroed: %v", i, j, r[j])
			}
			r[j] = types.NewInt(int64(i*10 + j))
		}
		rows = append(rows, r)
	}
	grown := append(rows[0], types.NewInt(-1))
	grown[0] = types.NewInt(-2)
	if wide := a.row(rowAllocChunk + 1); len(wide) != rowAllocChunk+1 {
		t.Fatalf("a row wider than a chunk has %d datums", len(wide))
	}
	for i, r := range rows {
		for j := range r {
			if got := r[j].Int(); got != int64(i*10+j) {
				t.Fatalf("row %d col %d = %d, want %d: rows overlap", i, j, got, i*10+j)
			}
		}
	}
}
