package txnkv_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/mvcc"
)

// LockAndGet returns what LockKeys + BatchGet at ForUpdateTS would: the
// store's values for newly locked keys, the buffer's for written keys, a
// read for keys locked earlier, nothing for absent keys.
func TestLockAndGet(t *testing.T) {
	s := open(t)
	long := strings.Repeat("v", mvcc.ShortValueMaxLen+1)
	write(t, s, true, "a", "1", "b", "2", "c", "3", "big", long)

	txn := begin(t, s, kv.Pessimistic, false)
	fu := txn.StartTS()
	opts := kv.LockOptions{ForUpdateTS: fu, WaitTimeout: -1}
	must(t, txn.LockKeys(ctx, opts, kv.Key("c")))
	must(t, txn.Set(kv.Key("b"), []byte("mine")))
	got, err := txn.LockAndGet(ctx, opts, []kv.Key{kv.Key("a"), kv.Key("b"), kv.Key("c"), kv.Key("absent"), kv.Key("big"), kv.Key("a")})
	must(t, err)
	if want := fmt.Sprint(map[string]string{"a": "1", "b": "mine", "c": "3", "big": long}); fmt.Sprint(strMap(got)) != want {
		t.Fatalf("got %v, want %v", strMap(got), want)
	}
	// All of them are locked now: another transaction cannot take them.
	other := begin(t, s, kv.Pessimistic, false)
	for _, k := range []string{"a", "b", "absent", "big"} {
		if err := other.LockKeys(ctx, kv.LockOptions{ForUpdateTS: other.StartTS(), WaitTimeout: 0}, kv.Key(k)); !errors.Is(err, kv.ErrLockWaitTimeout) {
			t.Fatalf("lock %s held by another txn: %v", k, err)
		}
	}
	must(t, other.Rollback())
	must(t, txn.Rollback())

	// A write committed after ForUpdateTS is a conflict, as with LockKeys.
	late := begin(t, s, kv.Pessimistic, false)
	write(t, s, true, "a", "newer")
	if _, err := late.LockAndGet(ctx, kv.LockOptions{ForUpdateTS: late.StartTS(), WaitTimeout: -1}, []kv.Key{kv.Key("a")}); !errors.Is(err, kv.ErrWriteConflict) {
		t.Fatalf("lock behind a newer commit: %v", err)
	}
	must(t, late.Rollback())
}

func strMap(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
