package txnkv

import (
	"errors"
	"testing"

	"github.com/shoaldb/shoal/kv"
)

type gcTooEarly struct{}

func (gcTooEarly) Error() string    { return "too early" }
func (gcTooEarly) GCTooEarly() bool { return true }

// A store's GC-safe-point refusal reaches the SQL layer as kv.ErrGCTooEarly.
func TestMapErrGCTooEarly(t *testing.T) {
	if err := mapErr(gcTooEarly{}, 1); !errors.Is(err, kv.ErrGCTooEarly) {
		t.Fatalf("mapped to %v", err)
	}
}
