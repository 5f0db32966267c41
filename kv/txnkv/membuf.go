package txnkv

import "sort"

const (
	flagPresumeNotExists uint8 = 1 << iota
)

type entry struct {
	value []byte // nil: a buffered delete
	flags uint8
}

type undo struct {
	key     string
	prev    entry
	existed bool
}

// memBuffer is a transaction's ordered write buffer with nested staging.
// Lookups go through a map; order is kept lazily: keys added since the last
// ordered walk wait in pending and are merged on demand, so a stream of
// writes costs O(1) each and a walk O(n + p log p).
type memBuffer struct {
	m       map[string]entry
	sorted  []string
	pending []string
	size    int
	log     []undo
	stages  []int // log length at each open staging
}

func newMemBuffer() memBuffer { return memBuffer{m: make(map[string]entry)} }

func (b *memBuffer) get(k []byte) (entry, bool) {
	e, ok := b.m[string(k)]
	return e, ok
}

func (b *memBuffer) set(k []byte, e entry) {
	key := string(k)
	prev, existed := b.m[key]
	if len(b.stages) > 0 {
		b.log = append(b.log, undo{key: key, prev: prev, existed: existed})
	}
	if existed {
		b.size -= len(prev.value)
	} else {
		b.size += len(key)
		b.pending = append(b.pending, key)
	}
	b.size += len(e.value)
	b.m[key] = e
}

func (b *memBuffer) len() int { return len(b.m) }

func (b *memBuffer) staging() int {
	b.stages = append(b.stages, len(b.log))
	return len(b.stages)
}

// release keeps the writes of stage h (and of any stage above it).
func (b *memBuffer) release(h int) {
	if h <= 0 || h > len(b.stages) {
		return
	}
	b.stages = b.stages[:h-1]
	if len(b.stages) == 0 {
		b.log = b.log[:0]
	}
}

// cleanup discards the writes of stage h (and of any stage above it).
func (b *memBuffer) cleanup(h int) {
	if h <= 0 || h > len(b.stages) {
		return
	}
	mark := b.stages[h-1]
	for i := len(b.log) - 1; i >= mark; i-- {
		u := b.log[i]
		cur := b.m[u.key]
		b.size -= len(cur.value)
		if u.existed {
			b.m[u.key] = u.prev
			b.size += len(u.prev.value)
		} else {
			delete(b.m, u.key)
			b.size -= len(u.key)
		}
	}
	b.log = b.log[:mark]
	b.stages = b.stages[:h-1]
}

// keys returns the buffered keys in order. The returned slice is never
// modified afterwards (later merges build a new one).
func (b *memBuffer) keys() []string {
	if len(b.pending) == 0 && len(b.sorted) == len(b.m) {
		return b.sorted
	}
	sort.Strings(b.pending)
	out := make([]string, 0, len(b.m))
	i, j := 0, 0
	add := func(k string) {
		if _, ok := b.m[k]; !ok {
			return
		}
		if n := len(out); n > 0 && out[n-1] == k {
			return
		}
		out = append(out, k)
	}
	for i < len(b.sorted) || j < len(b.pending) {
		if j == len(b.pending) || (i < len(b.sorted) && b.sorted[i] <= b.pending[j]) {
			add(b.sorted[i])
			i++
		} else {
			add(b.pending[j])
			j++
		}
	}
	b.sorted, b.pending = out, b.pending[:0]
	return out
}

// bufIter walks buffered entries of [lower, upper) in either direction,
// including deletes.
type bufIter struct {
	b       *memBuffer
	keys    []string
	i       int
	lo, hi  int // valid index range [lo, hi)
	reverse bool
}

func (b *memBuffer) iter(lower, upper []byte, reverse bool) *bufIter {
	keys := b.keys()
	lo := sort.Search(len(keys), func(i int) bool { return keys[i] >= string(lower) })
	hi := len(keys)
	if upper != nil {
		hi = sort.Search(len(keys), func(i int) bool { return keys[i] >= string(upper) })
	}
	it := &bufIter{b: b, keys: keys, lo: lo, hi: hi, reverse: reverse}
	if reverse {
		it.i = hi - 1
	} else {
		it.i = lo
	}
	it.skip()
	return it
}

// skip moves past keys dropped from the map since keys() was taken.
func (it *bufIter) skip() {
	for it.valid() {
		if _, ok := it.b.m[it.keys[it.i]]; ok {
			return
		}
		it.step()
	}
}

func (it *bufIter) step() {
	if it.reverse {
		it.i--
	} else {
		it.i++
	}
}

func (it *bufIter) valid() bool  { return it.i >= it.lo && it.i < it.hi }
func (it *bufIter) key() string  { return it.keys[it.i] }
func (it *bufIter) entry() entry { return it.b.m[it.keys[it.i]] }
func (it *bufIter) next()        { it.step(); it.skip() }
