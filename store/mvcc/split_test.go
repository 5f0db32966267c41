package mvcc

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestSplitKeyOrdering checks Pebble's rules for a prefix split on the
// keys MVCC writes and the bounds and seek keys it passes: a prefix alone
// sorts before its longer keys, and prefixes order keys.
func TestSplitKeyOrdering(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var keys [][]byte
	for i := 0; i < 200; i++ {
		uk := make([]byte, rng.Intn(20))
		for j := range uk {
			uk[j] = byte(rng.Intn(4)) * 0x55 // few symbols: shared prefixes, 0x00 and 0xff
		}
		for _, p := range []byte{PrefixWrite, PrefixDefault} {
			vk := versionedKey(nil, p, uk, rng.Uint64())
			if got, want := SplitKey(vk), len(vk)-8; got != want {
				t.Fatalf("SplitKey(%x) = %d, want %d", vk, got, want)
			}
			pk := versionPrefix(nil, p, uk)
			if SplitKey(pk) != len(pk) {
				t.Fatalf("bound %x split at %d", pk, SplitKey(pk))
			}
			keys = append(keys, vk, pk, prefixEnd(pk))
		}
		keys = append(keys, lockKey(nil, uk))
	}
	prefix := func(k []byte) []byte { return k[:SplitKey(k)] }
	for _, a := range keys {
		if pa := prefix(a); len(pa) < len(a) && bytes.Compare(pa, a) >= 0 {
			t.Fatalf("prefix %x does not sort before %x", pa, a)
		}
		for _, b := range keys {
			c, pc := bytes.Compare(a, b), bytes.Compare(prefix(a), prefix(b))
			if (c <= 0 && pc > 0) || (pc < 0 && c >= 0) {
				t.Fatalf("order of %x, %x (%d) disagrees with their prefixes (%d)", a, b, c, pc)
			}
		}
	}
}
