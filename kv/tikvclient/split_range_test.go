package tikvclient_test

import (
	"fmt"
	"testing"

	"github.com/shoaldb/shoal/kv"
)

// TestSplitRange: a range is cut exactly at the region boundaries inside
// it, and covers it exactly.
func TestSplitRange(t *testing.T) {
	e := newEnv(t, envOpts{cluster: fourRegions}) // regions split at b, d, f
	ctx := testCtx(t)
	for _, tc := range []struct {
		start, end string
		want       string
	}{
		{"a", "e", `[a,b) [b,d) [d,e)`},
		{"b", "d", `[b,d)`},
		{"c", "c1", `[c,c1)`},
		{"", "", `[,b) [b,d) [d,f) [f,)`},
		{"e", "", `[e,f) [f,)`},
	} {
		var end kv.Key
		if tc.end != "" {
			end = kv.Key(tc.end)
		}
		rs, err := e.cl.SplitRange(ctx, kv.Key(tc.start), end)
		must(t, err)
		got := ""
		for i, r := range rs {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("[%s,%s)", r.Start, r.End)
		}
		if got != tc.want {
			t.Errorf("SplitRange(%q, %q) = %s, want %s", tc.start, tc.end, got, tc.want)
		}
	}
}
