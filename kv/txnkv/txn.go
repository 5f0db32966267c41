package txnkv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
)

type txn struct {
	s        *Storage
	opts     kv.TxnOptions
	startTS  uint64
	commitTS uint64
	snap     snapshot // reads of committed data, at the read ts
	buf      memBuffer
	valid    bool

	primary     []byte
	forUpdateTS uint64
	// pessimistic: keys holding our pessimistic lock, in lock order.
	locked     map[string]struct{}
	lockedKeys [][]byte
	// optimistic LockKeys: keys checked for conflicts at commit.
	optLocked map[string]struct{}

	hbOnce sync.Once
	hbStop chan struct{}
	// liveID registers the transaction in s.live until it finishes.
	liveID uint64
}

var _ kv.Txn = (*txn)(nil)

func newTxn(s *Storage, ts uint64, opts kv.TxnOptions) *txn {
	return &txn{s: s, opts: opts, startTS: ts, snap: snapshot{s: s, ts: ts, cache: map[string]cachedValue{}},
		buf: newMemBuffer(), valid: true, forUpdateTS: ts}
}

func (t *txn) StartTS() uint64  { return t.startTS }
func (t *txn) CommitTS() uint64 { return t.commitTS }
func (t *txn) Mode() kv.TxnMode { return t.opts.Mode }
func (t *txn) Len() int         { return t.buf.len() }
func (t *txn) Size() int        { return t.buf.size }
func (t *txn) Valid() bool      { return t.valid }
func (t *txn) Staging() kv.StagingHandle {
	return kv.StagingHandle(t.buf.staging())
}
func (t *txn) Release(h kv.StagingHandle) { t.buf.release(int(h)) }
func (t *txn) Cleanup(h kv.StagingHandle) { t.buf.cleanup(int(h)) }

func (t *txn) SetReadTS(ts uint64) {
	if ts == 0 {
		ts = t.startTS
	}
	t.snap.setTS(ts)
}

var errTxnDone = errors.New("txnkv: transaction already committed or rolled back")

func (t *txn) Get(ctx context.Context, k kv.Key) ([]byte, error) {
	if e, ok := t.buf.get(k); ok {
		if e.value == nil {
			return nil, kv.ErrNotExist
		}
		return e.value, nil
	}
	return t.snap.Get(ctx, k)
}

func (t *txn) BatchGet(ctx context.Context, keys []kv.Key) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	var rest []kv.Key
	for _, k := range keys {
		if e, ok := t.buf.get(k); ok {
			if e.value != nil {
				out[string(k)] = e.value
			}
			continue
		}
		rest = append(rest, k)
	}
	if err := t.snap.batchGetInto(ctx, rest, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *txn) Iter(ctx context.Context, lower, upper kv.Key) (kv.Iterator, error) {
	return t.iter(ctx, lower, upper, false, 0)
}

func (t *txn) IterReverse(ctx context.Context, lower, upper kv.Key) (kv.Iterator, error) {
	return t.iter(ctx, lower, upper, true, 0)
}

func (t *txn) IterSized(ctx context.Context, lower, upper kv.Key, reverse bool, n int) (kv.Iterator, error) {
	return t.iter(ctx, lower, upper, reverse, n)
}

func (t *txn) iter(ctx context.Context, lower, upper kv.Key, reverse bool, sizeHint int) (kv.Iterator, error) {
	si, err := t.snap.newScanIter(ctx, lower, upper, reverse, sizeHint)
	if err != nil {
		return nil, err
	}
	if t.buf.len() == 0 {
		return si, nil
	}
	u := &unionIter{snap: si, buf: t.buf.iter(lower, upper, reverse), reverse: reverse}
	if err := u.settle(); err != nil {
		return nil, err
	}
	return u, nil
}

func (t *txn) Set(k kv.Key, v []byte) error {
	if !t.valid {
		return errTxnDone
	}
	if len(k) == 0 {
		return errors.New("txnkv: empty key")
	}
	if v == nil {
		v = []byte{}
	}
	var flags uint8
	if e, ok := t.buf.get(k); ok {
		flags = e.flags
	}
	t.buf.set(k, entry{value: v, flags: flags})
	return nil
}

func (t *txn) Delete(k kv.Key) error {
	if !t.valid {
		return errTxnDone
	}
	t.buf.set(k, entry{})
	return nil
}

func (t *txn) SetPresumeKeyNotExists(k kv.Key) {
	if e, ok := t.buf.get(k); ok && e.value != nil {
		e.flags |= flagPresumeNotExists
		t.buf.set(k, e)
	}
}

// ---- pessimistic locking ----

func (t *txn) LockKeys(ctx context.Context, opts kv.LockOptions, keys ...kv.Key) error {
	return t.lockKeys(ctx, opts, keys, nil)
}

func (t *txn) LockAndGet(ctx context.Context, opts kv.LockOptions, keys []kv.Key) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	if !t.valid {
		return nil, errTxnDone
	}
	if t.opts.Mode == kv.Optimistic {
		if err := t.LockKeys(ctx, opts, keys...); err != nil {
			return nil, err
		}
		return t.BatchGet(ctx, keys)
	}
	if err := t.lockKeys(ctx, opts, keys, out); err != nil {
		return nil, err
	}
	// Keys buffered or locked before this call were not asked for values.
	var rest []kv.Key
	var answered [][]byte
	for _, k := range keys {
		if _, ok := out[string(k)]; !ok {
			rest = append(rest, k)
		} else {
			answered = append(answered, k)
		}
	}
	for k, v := range out {
		if v == nil {
			delete(out, k) // answered: absent
		}
	}
	// A key locked at ForUpdateTS has nothing newer than it committed: the
	// values read are the snapshot's at that ts.
	if t.snap.ts == opts.ForUpdateTS {
		t.snap.remember(answered, out)
	}
	if len(rest) > 0 {
		got, err := t.BatchGet(ctx, rest)
		if err != nil {
			return nil, err
		}
		for k, v := range got {
			out[k] = v
		}
	}
	return out, nil
}

func hasLockKey(req []kvrpc.PessimisticLockKey, k []byte) bool {
	for i := range req {
		if bytes.Equal(req[i].Key, k) {
			return true
		}
	}
	return false
}

// lockKeys locks keys; with values non-nil it also stores there the latest
// committed value of each key it sent to the store that the transaction
// has not buffered a write for (nil for an absent one).
func (t *txn) lockKeys(ctx context.Context, opts kv.LockOptions, keys []kv.Key, values map[string][]byte) error {
	if !t.valid {
		return errTxnDone
	}
	if t.opts.Mode == kv.Optimistic {
		if t.optLocked == nil {
			t.optLocked = map[string]struct{}{}
		}
		for _, k := range keys {
			t.optLocked[string(k)] = struct{}{}
		}
		return nil
	}
	forUpdateTS := opts.ForUpdateTS
	if forUpdateTS == 0 {
		forUpdateTS = t.startTS
	}
	req := make([]kvrpc.PessimisticLockKey, 0, len(keys))
	var seen map[string]struct{} // for long key lists; short ones are searched
	if len(keys) > 16 {
		seen = make(map[string]struct{}, len(keys))
	}
	for _, k := range keys {
		if _, ok := t.locked[string(k)]; ok {
			continue
		}
		if seen != nil {
			if _, ok := seen[string(k)]; ok {
				continue
			}
			seen[string(k)] = struct{}{}
		} else if hasLockKey(req, k) {
			continue
		}
		pk := kvrpc.PessimisticLockKey{Key: k}
		if e, ok := t.buf.get(k); ok && e.flags&flagPresumeNotExists != 0 {
			pk.ShouldNotExist = true
		}
		req = append(req, pk)
	}
	if len(req) == 0 {
		return nil
	}
	setPrimary := t.primary == nil
	if setPrimary {
		t.primary = append([]byte(nil), req[0].Key...)
	}
	got, err := t.pessimisticLock(ctx, req, forUpdateTS, opts.WaitTimeout, values != nil)
	if err != nil {
		if setPrimary {
			t.primary = nil
		}
		return err
	}
	if t.locked == nil {
		t.locked = map[string]struct{}{}
	}
	for _, pk := range req {
		k := append([]byte(nil), pk.Key...)
		t.locked[string(k)] = struct{}{}
		t.lockedKeys = append(t.lockedKeys, k)
	}
	if forUpdateTS > t.forUpdateTS {
		t.forUpdateTS = forUpdateTS
	}
	t.startHeartbeat()
	if values == nil {
		return nil
	}
	for i, pk := range req {
		if _, buffered := t.buf.get(pk.Key); buffered {
			continue // BatchGet answers from the buffer
		}
		var v []byte
		if i < len(got) {
			v = got[i]
		}
		values[string(pk.Key)] = v
	}
	return nil
}

// pessimisticLock locks keys, resolving expired locks and waiting up to
// timeout; with returnValues it returns each key's latest committed value
// (nil if absent), in keys' order.
func (t *txn) pessimisticLock(ctx context.Context, keys []kvrpc.PessimisticLockKey, forUpdateTS uint64, timeout time.Duration, returnValues bool) ([][]byte, error) {
	if timeout < 0 {
		timeout = DefaultLockWaitTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		remaining := time.Until(deadline)
		if timeout == 0 {
			remaining = 0
		}
		resp, err := t.s.store.KvPessimisticLock(ctx, kvrpc.PessimisticLockRequest{
			Keys: keys, PrimaryLock: t.primary, StartTS: t.startTS, ForUpdateTS: forUpdateTS,
			LockTTL: t.lockTTL(), WaitTimeout: max(remaining, 0), ReturnValues: returnValues,
		})
		if err == nil {
			return resp.Values, nil
		}
		var le *kvrpc.KeyIsLockedError
		if !errors.As(err, &le) {
			return nil, mapErr(err, t.startTS)
		}
		// The holder's TTL may have run out, or we may not wait: resolve.
		ok, rerr := t.s.resolveLocks(ctx, forUpdateTS, le.Locks)
		if rerr != nil {
			return nil, mapErr(rerr, t.startTS)
		}
		if ok {
			continue
		}
		if timeout == 0 || time.Until(deadline) <= 0 {
			return nil, fmt.Errorf("%w: key %q held by txn %d", kv.ErrLockWaitTimeout, le.Locks[0].Key, le.Locks[0].LockTS)
		}
		// Alive by the TSO clock: give the store another wait slice.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lockTTL is the pessimistic lock TTL: the txn's age plus a margin, so a
// heartbeat that stopped (the client died) lets it expire soon.
func (t *txn) lockTTL() uint64 {
	age := time.Since(pd.PhysicalTime(t.startTS)).Milliseconds()
	return uint64(max(age, 0)) + pessimisticLockTTL
}

func (t *txn) startHeartbeat() {
	t.hbOnce.Do(func() {
		t.hbStop = make(chan struct{})
		primary, startTS, store, stop := t.primary, t.startTS, t.s.store, t.hbStop
		go func() {
			tick := time.NewTicker(heartbeatInterval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					ttl := uint64(max(time.Since(pd.PhysicalTime(startTS)).Milliseconds(), 0)) + pessimisticLockTTL
					// A failure (the primary not prewritten yet, a store
					// unreachable) is retried at the next tick; the
					// transaction's end stops the loop.
					ctx, cancel := context.WithTimeout(context.Background(), heartbeatInterval)
					_, _ = store.KvTxnHeartBeat(ctx, kvrpc.TxnHeartBeatRequest{
						PrimaryLock: primary, StartTS: startTS, AdviseLockTTL: ttl,
					})
					cancel()
				}
			}
		}()
	})
}

func (t *txn) stopHeartbeat() {
	// Every Commit and Rollback ends here: the transaction is finished.
	if t.liveID != 0 {
		t.s.live.done(t.liveID)
		t.liveID = 0
	}
	if t.hbStop != nil {
		close(t.hbStop)
		t.hbStop = nil
	}
}

// ---- commit and rollback ----

func (t *txn) mutations() []kvrpc.Mutation {
	keys := t.buf.keys()
	ms := make([]kvrpc.Mutation, 0, len(keys)+len(t.lockedKeys)+len(t.optLocked))
	for _, k := range keys {
		e, _ := t.buf.get([]byte(k))
		m := kvrpc.Mutation{Key: []byte(k), Value: e.value}
		switch {
		case e.value == nil:
			m.Op = kvrpc.OpDel
		case e.flags&flagPresumeNotExists != 0:
			m.Op = kvrpc.OpInsert
		default:
			m.Op = kvrpc.OpPut
		}
		_, m.IsPessimisticLock = t.locked[k]
		ms = append(ms, m)
	}
	for _, k := range t.lockedKeys {
		if _, ok := t.buf.get(k); !ok {
			ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpLock, Key: k, IsPessimisticLock: true})
		}
	}
	for k := range t.optLocked {
		if _, ok := t.buf.get([]byte(k)); !ok {
			if _, ok := t.locked[k]; !ok {
				ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpLock, Key: []byte(k)})
			}
		}
	}
	return ms
}

func (t *txn) Commit(ctx context.Context) error {
	if !t.valid {
		return errTxnDone
	}
	if err := t.s.checkClosed(); err != nil {
		return err
	}
	defer t.stopHeartbeat()
	ms := t.mutations()
	if len(ms) == 0 {
		t.valid = false
		t.commitTS = t.startTS
		return nil
	}
	primary := t.primary
	if primary == nil {
		primary = ms[0].Key
	}
	pessimistic := t.opts.Mode == kv.Pessimistic
	req := kvrpc.PrewriteRequest{
		Mutations: ms, PrimaryLock: primary, StartTS: t.startTS, LockTTL: prewriteLockTTL,
		TxnSize: uint64(len(ms)), TryOnePC: t.opts.Enable1PC,
	}
	if pessimistic {
		req.ForUpdateTS = t.forUpdateTS
		req.LockTTL = t.lockTTL()
	} else if len(ms) >= bigTxnKeys {
		// Prewriting this many keys may take longer than prewriteLockTTL:
		// the locks get the managed TTL and a heartbeat keeps it ahead,
		// so readers do not take the transaction for dead meanwhile.
		req.LockTTL = t.lockTTL()
		t.primary = primary
		t.startHeartbeat()
	} else {
		// Age plus a margin: a long transaction's locks are not taken for
		// dead between its prewrite and its commit.
		req.LockTTL = uint64(max(time.Since(pd.PhysicalTime(t.startTS)).Milliseconds(), 0)) + prewriteLockTTL
	}
	// Primary first; Primary tells a client that splits the commit by
	// region to commit the primary's part before the others (one store
	// commits all keys in one atomic batch).
	keys := make([][]byte, 0, len(ms))
	keys = append(keys, primary)
	keyBytes := len(primary)
	for _, m := range ms {
		if m.Op != kvrpc.OpCheckNotExists && !bytes.Equal(m.Key, primary) {
			keys = append(keys, m.Key)
			keyBytes += len(m.Key)
		}
	}
	if t.opts.EnableAsyncCommit && len(keys) <= asyncCommitMaxKeys && keyBytes <= asyncCommitMaxKeyBytes {
		req.UseAsyncCommit, req.Secondaries = true, keys[1:]
		if t.opts.AsyncCommitLinearizable {
			ts, err := t.s.pd.GetTS(ctx)
			if err != nil {
				t.rollbackAfterFailure()
				return err
			}
			req.MinCommitTS = ts
		}
	}
	var bo backoff
	var resp kvrpc.PrewriteResponse
	for {
		var err error
		resp, err = t.s.store.KvPrewrite(ctx, req)
		if err == nil {
			break
		}
		if err = t.s.handleLocked(ctx, err, t.startTS, &bo); err != nil {
			t.rollbackAfterFailure()
			return mapErr(err, t.startTS)
		}
	}
	if resp.OnePCCommitTS != 0 {
		t.valid = false
		t.commitTS = resp.OnePCCommitTS
		return nil
	}
	if req.UseAsyncCommit && resp.MinCommitTS != 0 {
		// Every key holds an async-commit lock: the transaction is
		// committed at the largest min_commit_ts (a resolver that finds
		// the locks computes the same). The second phase only tidies up.
		t.valid = false
		t.commitTS = resp.MinCommitTS
		t.s.commitInBackground(kvrpc.CommitRequest{Keys: keys, StartTS: t.startTS, CommitTS: t.commitTS, Primary: primary})
		return nil
	}
	commitTS, err := t.s.pd.GetTS(ctx)
	if err != nil {
		t.rollbackAfterFailure()
		return err
	}
	_, err = t.s.store.KvCommit(ctx, kvrpc.CommitRequest{Keys: keys, StartTS: t.startTS, CommitTS: commitTS, Primary: primary})
	if err != nil {
		var nf *kvrpc.TxnLockNotFoundError
		var ud *kvrpc.UndeterminedError
		if !errors.As(err, &ud) && errors.As(err, &nf) {
			t.valid = false
			return mapErr(err, t.startTS)
		}
		// The primary's commit may have been applied (a store failed
		// mid-write, or a connection dropped after sending: a client
		// reports that as kvrpc.UndeterminedError); do not guess.
		t.valid = false
		return fmt.Errorf("%w: %v", kv.ErrResultUndetermined, err)
	}
	t.valid = false
	t.commitTS = commitTS
	return nil
}

// commitInBackground runs an async commit's second phase. Its failure
// changes nothing: the transaction is committed, and readers resolve the
// locks left behind through the primary.
func (s *Storage) commitInBackground(req kvrpc.CommitRequest) {
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), asyncCommitTimeout)
		defer cancel()
		_, _ = s.store.KvCommit(ctx, req)
	}()
}

// rollbackAfterFailure cleans up after a failed prewrite: a prewrite writes
// all or nothing, so only pessimistic locks remain to release.
func (t *txn) rollbackAfterFailure() {
	t.valid = false
	t.releasePessimistic()
}

func (t *txn) releasePessimistic() {
	if len(t.lockedKeys) == 0 {
		return
	}
	_, _ = t.s.store.KvPessimisticRollback(context.Background(), kvrpc.PessimisticRollbackRequest{
		Keys: t.lockedKeys, StartTS: t.startTS,
	})
	t.lockedKeys, t.locked = nil, nil
}

// Rollback discards the transaction; it is a no-op on a finished one
// (for example after a failed Commit).
func (t *txn) Rollback() error {
	if !t.valid {
		t.stopHeartbeat()
		return nil
	}
	t.valid = false
	t.stopHeartbeat()
	t.releasePessimistic()
	return nil
}

// ---- union iterator ----

// unionIter overlays the write buffer on a snapshot iterator.
type unionIter struct {
	snap    *scanIter
	buf     *bufIter
	reverse bool
	// current position
	useBuf bool
	key    kv.Key
	val    []byte
	valid  bool
}

// settle positions on the next visible entry at or after the cursors.
func (u *unionIter) settle() error {
	for {
		sv, bv := u.snap.Valid(), u.buf.valid()
		if !sv && !bv {
			u.valid = false
			return nil
		}
		var c int
		switch {
		case !sv:
			c = 1 // buffer only
		case !bv:
			c = -1
		default:
			c = bytes.Compare(u.snap.Key(), []byte(u.buf.key()))
			if u.reverse {
				c = -c
			}
		}
		if c < 0 {
			u.useBuf, u.key, u.val, u.valid = false, u.snap.Key(), u.snap.Value(), true
			return nil
		}
		if c == 0 {
			// The buffer shadows the snapshot.
			if err := u.snap.Next(); err != nil {
				return err
			}
		}
		e := u.buf.entry()
		if e.value == nil { // buffered delete
			u.buf.next()
			continue
		}
		u.useBuf, u.key, u.val, u.valid = true, kv.Key(u.buf.key()), e.value, true
		return nil
	}
}

func (u *unionIter) Valid() bool   { return u.valid }
func (u *unionIter) Key() kv.Key   { return u.key }
func (u *unionIter) Value() []byte { return u.val }

func (u *unionIter) Next() error {
	if u.useBuf {
		u.buf.next()
	} else if err := u.snap.Next(); err != nil {
		return err
	}
	return u.settle()
}

func (u *unionIter) Close() { u.snap.Close(); u.valid = false }
