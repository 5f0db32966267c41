package mvcckey

import (
	"bytes"
	"testing"
)

func TestVersionedKeyRoundTrip(t *testing.T) {
	for _, key := range [][]byte{{}, []byte("a"), []byte("12345678"), []byte("123456789abcdefgh")} {
		k := VersionedKey(nil, PrefixWrite, key, 42)
		if got := SplitKey(k); got != len(k)-VersionLen {
			t.Errorf("SplitKey(%q) = %d, want %d", key, got, len(k)-VersionLen)
		}
		prefix, ts, err := SplitVersioned(k)
		if err != nil || ts != 42 || !bytes.Equal(prefix, VersionPrefix(nil, PrefixWrite, key)) {
			t.Errorf("SplitVersioned(%q) = %x, %d, %v", key, prefix, ts, err)
		}
		uk, err := UserKey(k)
		if err != nil || !bytes.Equal(uk, key) {
			t.Errorf("UserKey(%q) = %q, %v", key, uk, err)
		}
	}
}

func TestNewerVersionsSortFirst(t *testing.T) {
	older := VersionedKey(nil, PrefixDefault, []byte("k"), 1)
	newer := VersionedKey(nil, PrefixDefault, []byte("k"), 2)
	if bytes.Compare(newer, older) >= 0 {
		t.Fatalf("version 2 key %x does not sort before version 1 key %x", newer, older)
	}
}

func TestEngineRangesHoldTheirKeys(t *testing.T) {
	ranges := EngineRanges([]byte("b"), []byte("d"))
	if len(ranges) != len(DataPrefixes) {
		t.Fatalf("%d ranges, want %d", len(ranges), len(DataPrefixes))
	}
	in := func(k []byte) bool {
		for _, r := range ranges {
			if bytes.Compare(k, r.Start) >= 0 && bytes.Compare(k, r.End) < 0 {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		key  string
		want bool
	}{{"a", false}, {"b", true}, {"c", true}, {"czzzzzzzzz", true}, {"d", false}} {
		for _, k := range [][]byte{LockKey(nil, []byte(c.key)), VersionedKey(nil, PrefixWrite, []byte(c.key), 7)} {
			if got := in(k); got != c.want {
				t.Errorf("key %q (engine %x) in [b, d) ranges = %v, want %v", c.key, k, got, c.want)
			}
		}
	}
	if _, err := UserKey([]byte{PrefixLocal, 1}); err != ErrNotDataKey {
		t.Errorf("UserKey of a local key: %v, want ErrNotDataKey", err)
	}
}
