package mvcc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// TestMVCCTranscripts runs the transcripts in testdata/ on every test
// engine: each line is one MVCC command, its answer (or error) is
// printed, and `dump` prints the lock, write and default records the
// commands left. Timestamps are small numbers, so a lock's physical time
// is 0 and it expires at current_ms >= its TTL.
//
// Commands (key lists are comma-separated):
//
//	prewrite start=N primary=K [ttl=N] [for_update=N] [min_commit=N] [async secondaries=K,..] [one_pc]
//	  <op> <key> [value] [pessimistic]   one mutation a line; op: put, insert, del, lock, check_not_exists;
//	                                     a value x*300 is 300 x's
//	commit start=N commit=N keys=K,..
//	rollback start=N keys=K,..
//	cleanup key=K start=N [current_ms=N]
//	check_txn_status primary=K lock_ts=N [current_ms=N] [rollback_if_not_exist] [force_sync_commit]
//	check_secondary_locks start=N keys=K,..
//	resolve_lock start=N [commit=N] [keys=K,..]
//	heartbeat primary=K start=N ttl=N
//	pessimistic_lock start=N for_update=N primary=K keys=K,.. [ttl=N] [return_values] [should_not_exist]
//	pessimistic_rollback start=N [for_update=N] keys=K,..
//	get key=K ts=N
//	scan ts=N [start=K] [end=K] [limit=N] [reverse]
//	gc safe_point=N
//	dump
func TestMVCCTranscripts(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
			s := eng.newStore(t)
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				return runTranscriptCommand(t, s, d)
			})
		})
	})
}

func ddUint(t *testing.T, d *datadriven.TestData, key string, def uint64) uint64 {
	t.Helper()
	if !d.HasArg(key) {
		return def
	}
	var s string
	d.ScanArgs(t, key, &s)
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return n
}

func ddString(t *testing.T, d *datadriven.TestData, key string) string {
	t.Helper()
	var s string
	if d.HasArg(key) {
		d.ScanArgs(t, key, &s)
	}
	return s
}

func ddKeys(t *testing.T, d *datadriven.TestData, key string) [][]byte {
	t.Helper()
	if !d.HasArg(key) {
		return nil
	}
	var list string
	d.ScanArgs(t, key, &list)
	ks := strings.Split(list, ",")
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(k)
	}
	return out
}

// ddOptKey is the key argument, nil (unbounded) when absent.
func ddOptKey(t *testing.T, d *datadriven.TestData, key string) []byte {
	t.Helper()
	if !d.HasArg(key) {
		return nil
	}
	return []byte(ddString(t, d, key))
}

// ddValue expands "x*300" to 300 x's.
func ddValue(s string) []byte {
	if c, n, ok := strings.Cut(s, "*"); ok {
		if k, err := strconv.Atoi(n); err == nil {
			return bytes.Repeat([]byte(c), k)
		}
	}
	return []byte(s)
}

// msTS is a timestamp at physical time ms (for current_ms).
func msTS(ms uint64) uint64 { return ms << 18 }

func runTranscriptCommand(t *testing.T, s *Store, d *datadriven.TestData) string {
	var out fmt.Stringer
	var err error
	switch d.Cmd {
	case "prewrite":
		req := kvrpc.PrewriteRequest{
			PrimaryLock: []byte(ddString(t, d, "primary")), StartTS: ddUint(t, d, "start", 0),
			LockTTL: ddUint(t, d, "ttl", 3000), ForUpdateTS: ddUint(t, d, "for_update", 0),
			MinCommitTS: ddUint(t, d, "min_commit", 0), UseAsyncCommit: d.HasArg("async"),
			Secondaries: ddKeys(t, d, "secondaries"), TryOnePC: d.HasArg("one_pc"),
		}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				d.Fatalf(t, "bad mutation %q", line)
			}
			m := kvrpc.Mutation{Key: []byte(f[1])}
			switch f[0] {
			case "put":
				m.Op = kvrpc.OpPut
			case "insert":
				m.Op = kvrpc.OpInsert
			case "del":
				m.Op = kvrpc.OpDel
			case "lock":
				m.Op = kvrpc.OpLock
			case "check_not_exists":
				m.Op = kvrpc.OpCheckNotExists
			default:
				d.Fatalf(t, "bad mutation op %q", f[0])
			}
			rest := f[2:]
			if (m.Op == kvrpc.OpPut || m.Op == kvrpc.OpInsert) && len(rest) > 0 {
				m.Value, rest = ddValue(rest[0]), rest[1:]
			}
			for _, flag := range rest {
				if flag != "pessimistic" {
					d.Fatalf(t, "bad mutation flag %q", flag)
				}
				m.IsPessimisticLock = true
			}
			req.Mutations = append(req.Mutations, m)
		}
		var resp kvrpc.PrewriteResponse
		resp, err = s.Prewrite(ctx, req)
		out = fmtAnswer("ok min_commit_ts=%d one_pc_commit_ts=%d", resp.MinCommitTS, resp.OnePCCommitTS)
	case "commit":
		_, err = s.Commit(ctx, kvrpc.CommitRequest{Keys: ddKeys(t, d, "keys"), StartTS: ddUint(t, d, "start", 0), CommitTS: ddUint(t, d, "commit", 0)})
		out = fmtAnswer("ok")
	case "rollback":
		_, err = s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: ddKeys(t, d, "keys"), StartTS: ddUint(t, d, "start", 0)})
		out = fmtAnswer("ok")
	case "cleanup":
		var resp kvrpc.CleanupResponse
		resp, err = s.Cleanup(ctx, kvrpc.CleanupRequest{Key: []byte(ddString(t, d, "key")), StartTS: ddUint(t, d, "start", 0), CurrentTS: msTS(ddUint(t, d, "current_ms", 0))})
		out = fmtAnswer("ok commit_ts=%d", resp.CommitTS)
	case "check_txn_status":
		var resp kvrpc.CheckTxnStatusResponse
		resp, err = s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
			PrimaryKey: []byte(ddString(t, d, "primary")), LockTS: ddUint(t, d, "lock_ts", 0),
			CurrentTS: msTS(ddUint(t, d, "current_ms", 0)), RollbackIfNotExist: d.HasArg("rollback_if_not_exist"),
			ForceSyncCommit: d.HasArg("force_sync_commit"),
		})
		lock := "none"
		if resp.Lock != nil {
			lock = fmtLockInfo(resp.Lock)
		}
		out = fmtAnswer("ok lock_ttl=%d commit_ts=%d action=%s lock=%s", resp.LockTTL, resp.CommitTS, fmtAction(resp.Action), lock)
	case "check_secondary_locks":
		var resp kvrpc.CheckSecondaryLocksResponse
		resp, err = s.CheckSecondaryLocks(ctx, kvrpc.CheckSecondaryLocksRequest{Keys: ddKeys(t, d, "keys"), StartTS: ddUint(t, d, "start", 0)})
		var locks []string
		for _, l := range resp.Locks {
			locks = append(locks, fmtLockInfo(l))
		}
		out = fmtAnswer("ok commit_ts=%d locks=[%s]", resp.CommitTS, strings.Join(locks, " "))
	case "resolve_lock":
		_, err = s.ResolveLock(ctx, kvrpc.ResolveLockRequest{Keys: ddKeys(t, d, "keys"), StartTS: ddUint(t, d, "start", 0), CommitTS: ddUint(t, d, "commit", 0)})
		out = fmtAnswer("ok")
	case "heartbeat":
		var resp kvrpc.TxnHeartBeatResponse
		resp, err = s.TxnHeartBeat(ctx, kvrpc.TxnHeartBeatRequest{PrimaryLock: []byte(ddString(t, d, "primary")), StartTS: ddUint(t, d, "start", 0), AdviseLockTTL: ddUint(t, d, "ttl", 0)})
		out = fmtAnswer("ok lock_ttl=%d", resp.LockTTL)
	case "pessimistic_lock":
		req := kvrpc.PessimisticLockRequest{
			PrimaryLock: []byte(ddString(t, d, "primary")), StartTS: ddUint(t, d, "start", 0),
			ForUpdateTS: ddUint(t, d, "for_update", 0), LockTTL: ddUint(t, d, "ttl", 3000),
			ReturnValues: d.HasArg("return_values"),
		}
		for _, k := range ddKeys(t, d, "keys") {
			req.Keys = append(req.Keys, kvrpc.PessimisticLockKey{Key: k, ShouldNotExist: d.HasArg("should_not_exist")})
		}
		var resp kvrpc.PessimisticLockResponse
		resp, err = s.PessimisticLock(ctx, req)
		var vals []string
		for _, v := range resp.Values {
			vals = append(vals, fmtValue(v))
		}
		out = fmtAnswer("ok values=[%s]", strings.Join(vals, " "))
	case "pessimistic_rollback":
		_, err = s.PessimisticRollback(ctx, kvrpc.PessimisticRollbackRequest{Keys: ddKeys(t, d, "keys"), StartTS: ddUint(t, d, "start", 0), ForUpdateTS: ddUint(t, d, "for_update", 0)})
		out = fmtAnswer("ok")
	case "get":
		var resp kvrpc.GetResponse
		resp, err = s.Get(ctx, kvrpc.GetRequest{Key: []byte(ddString(t, d, "key")), Version: ddUint(t, d, "ts", 0)})
		if resp.NotFound {
			out = fmtAnswer("not found")
		} else {
			out = fmtAnswer("%s", fmtValue(resp.Value))
		}
	case "scan":
		var resp kvrpc.ScanResponse
		resp, err = s.Scan(ctx, kvrpc.ScanRequest{
			StartKey: ddOptKey(t, d, "start"), EndKey: ddOptKey(t, d, "end"),
			Version: ddUint(t, d, "ts", 0), Limit: int(ddUint(t, d, "limit", 0)), Reverse: d.HasArg("reverse"),
		})
		var b strings.Builder
		for _, p := range resp.Pairs {
			fmt.Fprintf(&b, "%s=%s\n", p.Key, fmtValue(p.Value))
		}
		if b.Len() == 0 {
			b.WriteString("(empty)\n")
		}
		out = fmtAnswer("%s", strings.TrimSuffix(b.String(), "\n"))
	case "gc":
		var st GCStats
		st, err = s.GC(ctx, ddUint(t, d, "safe_point", 0))
		out = fmtAnswer("ok keys=%d writes_deleted=%d defaults_deleted=%d", st.Keys, st.WritesDeleted, st.DefaultDeleted)
	case "dump":
		return dumpRecords(t, s)
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	if err != nil {
		// A KeyIsLockedError's message names only its first lock.
		if le, ok := err.(*kvrpc.KeyIsLockedError); ok {
			var locks []string
			for _, l := range le.Locks {
				locks = append(locks, fmtLockInfo(l))
			}
			return "error: key is locked: " + strings.Join(locks, " ") + "\n"
		}
		return "error: " + err.Error() + "\n"
	}
	return out.String() + "\n"
}

type answer string

func (a answer) String() string { return string(a) }

func fmtAnswer(format string, args ...any) answer { return answer(fmt.Sprintf(format, args...)) }

// fmtValue prints short values as they are and long ones by length.
func fmtValue(v []byte) string {
	if v == nil {
		return "<nil>"
	}
	if len(v) > 32 {
		return fmt.Sprintf("<%d bytes>", len(v))
	}
	return string(v)
}

func fmtLockInfo(l *kvrpc.LockInfo) string {
	s := fmt.Sprintf("{%s %v primary=%s start=%d ttl=%d", l.Key, l.Type, l.Primary, l.LockTS, l.TTL)
	if l.ForUpdateTS != 0 {
		s += fmt.Sprintf(" for_update=%d", l.ForUpdateTS)
	}
	if l.MinCommitTS != 0 {
		s += fmt.Sprintf(" min_commit=%d", l.MinCommitTS)
	}
	if l.UseAsyncCommit {
		s += " async"
	}
	if len(l.Secondaries) > 0 {
		s += fmt.Sprintf(" secondaries=%s", bytes.Join(l.Secondaries, []byte(",")))
	}
	return s + "}"
}

// dumpRecords prints every lock, write and default record in the
// engine, in key order, decoded.
func dumpRecords(t *testing.T, s *Store) string {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	var b strings.Builder
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	for ok := it.First(); ok; ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "lock %s: %s", it.Key()[1:], fmtLockInfo(l.info(it.Key()[1:])))
		if l.HasShortValue {
			fmt.Fprintf(&b, " value=%s", fmtValue(l.ShortValue))
		}
		b.WriteString("\n")
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	for _, prefix := range []byte{PrefixWrite, PrefixDefault} {
		it := snap.NewIterator([]byte{prefix}, []byte{prefix + 1})
		for ok := it.First(); ok; ok = it.Next() {
			enc, ts, err := splitVersioned(it.Key())
			if err != nil {
				t.Fatal(err)
			}
			key, _, err := decodeKey(nil, enc[1:])
			if err != nil {
				t.Fatal(err)
			}
			if prefix == PrefixDefault {
				fmt.Fprintf(&b, "default %s@%d: %s\n", key, ts, fmtValue(it.Value()))
				continue
			}
			w, err := parseWrite(it.Value())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "write %s@%d: %c start=%d", key, ts, w.Type, w.StartTS)
			if w.HasShortValue {
				fmt.Fprintf(&b, " value=%s", fmtValue(w.ShortValue))
			}
			if w.OverlappedRollback {
				b.WriteString(" overlapped_rollback")
			}
			b.WriteString("\n")
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		it.Close()
	}
	if b.Len() == 0 {
		return "(empty)\n"
	}
	return b.String()
}

func fmtAction(a kvrpc.TxnAction) string {
	switch a {
	case kvrpc.NoAction:
		return "none"
	case kvrpc.TTLExpireRollback:
		return "ttl_expire_rollback"
	case kvrpc.LockNotExistRollback:
		return "lock_not_exist_rollback"
	}
	return fmt.Sprintf("action(%d)", a)
}
