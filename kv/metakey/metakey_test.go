package metakey

import (
	"strings"
	"testing"
)

// TestKeysStayApart fails if a key or prefix is not under Prefix, sorts
// at or after table data, or is a prefix of another owner's key (a scan of
// one would then return the other's records).
func TestKeysStayApart(t *testing.T) {
	if len(All) == 0 {
		t.Fatal("All is empty")
	}
	seen := map[string]bool{}
	for _, k := range All {
		if len(k) < 3 || k[0] != Prefix {
			t.Errorf("%q does not start with %q and an owner byte and tag", k, Prefix)
		}
		if k >= "t" {
			t.Errorf("%q does not sort before table data ('t')", k)
		}
		if seen[k] {
			t.Errorf("%q defined twice", k)
		}
		seen[k] = true
		for _, other := range All {
			if other != k && strings.HasPrefix(other, k) {
				t.Errorf("%q is a prefix of %q", k, other)
			}
		}
	}
}
