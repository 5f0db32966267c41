package tikvclient

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
)

// cleanupTimeout bounds the rollback after a failed multi-region command.
const cleanupTimeout = 5 * time.Second

type pbResponse interface {
	GetRegionError() *errorpb.RegionError
	GetError() *kvrpcpb.KeyError
}

// decode splits a call's outcome into a region error or an error (the
// call's, or the store's key error).
func decode[R pbResponse](resp R, err error) (*errorpb.RegionError, error) {
	if err != nil {
		return nil, err
	}
	if re := resp.GetRegionError(); re != nil {
		return re, nil
	}
	return nil, wire.KeyErrorFromPB(resp.GetError())
}

func allIdx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func pick(keys [][]byte, idx []int) [][]byte {
	out := make([][]byte, len(idx))
	for i, j := range idx {
		out[i] = keys[j]
	}
	return out
}

func (c *Client) opts0() *runOpts { return &runOpts{first: -1, timeout: c.opts.RPCTimeout} }

func (c *Client) newBackoffer() *backoffer { return newBackoffer(c.opts.MaxBackoff) }

// one sends a single-key command.
func (c *Client) one(ctx context.Context, key []byte, call func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error)) error {
	return c.run(ctx, c.newBackoffer(), [][]byte{key}, []int{0}, c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, _ part) (*errorpb.RegionError, error) {
			return call(ctx, cl, rctx)
		})
}

func (c *Client) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	var out kvrpc.GetResponse
	err := c.one(ctx, req.Key, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
		resp, err := cl.KvGet(ctx, wire.GetRequestToPB(rctx, req))
		re, err := decode(resp, err)
		if re == nil && err == nil {
			out = wire.GetResponseFromPB(resp)
		}
		return re, err
	})
	return out, err
}

// KvBatchGet returns the pairs found and, if some keys are locked, a
// KeyIsLockedError with every lock (beside the pairs read).
func (c *Client) KvBatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	var mu sync.Mutex
	var out kvrpc.BatchGetResponse
	err := c.run(ctx, c.newBackoffer(), req.Keys, allIdx(len(req.Keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = pick(req.Keys, p.idx)
			resp, err := cl.KvBatchGet(ctx, wire.BatchGetRequestToPB(rctx, sub))
			re, err := decode(resp, err)
			var le *kvrpc.KeyIsLockedError
			if re == nil && (err == nil || errors.As(err, &le)) {
				mu.Lock()
				out.Pairs = append(out.Pairs, wire.BatchGetResponseFromPB(resp).Pairs...)
				mu.Unlock()
			}
			return re, err
		})
	return out, err
}

// KvPrewrite prewrites the mutations region by region (one phase only if
// they all lie in one region).
func (c *Client) KvPrewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	keys := make([][]byte, len(req.Mutations))
	for i := range req.Mutations {
		keys[i] = req.Mutations[i].Key
	}
	var mu sync.Mutex
	var out kvrpc.PrewriteResponse
	split, syncLocks := false, false
	err := c.run(ctx, c.newBackoffer(), keys, allIdx(len(keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			if len(p.idx) < len(keys) {
				sub.Mutations = make([]kvrpc.Mutation, len(p.idx))
				hasPrimary := false
				for i, j := range p.idx {
					sub.Mutations[i] = req.Mutations[j]
					hasPrimary = hasPrimary || bytes.Equal(req.Mutations[j].Key, req.PrimaryLock)
				}
				sub.TryOnePC = false
				if !hasPrimary {
					sub.Secondaries = nil // only the primary's lock keeps them
				}
				mu.Lock()
				split = true
				mu.Unlock()
			}
			resp, err := cl.KvPrewrite(ctx, wire.PrewriteRequestToPB(rctx, sub))
			if err != nil && (sub.TryOnePC || sub.UseAsyncCommit) && !notSent(err) {
				// It may have committed (in one phase, or as the last
				// async-commit part): never resend, never call it failed.
				return nil, &kvrpc.UndeterminedError{Err: err}
			}
			re, err := decode(resp, err)
			if re == nil && err == nil {
				r := wire.PrewriteResponseFromPB(resp)
				mu.Lock()
				if sub.TryOnePC {
					out.OnePCCommitTS = r.OnePCCommitTS
				}
				if sub.UseAsyncCommit && r.OnePCCommitTS == 0 {
					if r.MinCommitTS == 0 {
						syncLocks = true
					}
					out.MinCommitTS = max(out.MinCommitTS, r.MinCommitTS)
				}
				mu.Unlock()
			}
			return re, err
		})
	if syncLocks {
		// Some store wrote ordinary locks: the transaction commits in two
		// phases.
		out.MinCommitTS = 0
	}
	if err != nil {
		var le *kvrpc.KeyIsLockedError
		var ud *kvrpc.UndeterminedError
		if split && !errors.As(err, &le) && !errors.As(err, &ud) {
			// Some regions may hold our locks: undo them, as a single
			// store's failed prewrite would have written nothing.
			c.rollbackAll(kvrpc.BatchRollbackRequest{Keys: keys, StartTS: req.StartTS})
		}
		return kvrpc.PrewriteResponse{}, err
	}
	return out, nil
}

func (c *Client) rollbackAll(req kvrpc.BatchRollbackRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_, _ = c.KvBatchRollback(ctx, req)
}

// KvCommit commits the primary's region first, then the rest in parallel.
// The primary is req.Primary, or Keys[0] when it is not set.
func (c *Client) KvCommit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	if len(req.Keys) == 0 {
		return kvrpc.CommitResponse{}, nil
	}
	primary := req.Primary
	if primary == nil {
		primary = req.Keys[0]
	}
	pi := -1
	for i, k := range req.Keys {
		if bytes.Equal(k, primary) {
			pi = i
			break
		}
	}
	var mu sync.Mutex
	primaryDone, primaryMaybe := false, false
	fn := func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
		sub := req
		sub.Keys = pick(req.Keys, p.idx)
		isPrimary := pi >= 0 && containsIdx(p.idx, pi)
		resp, err := cl.KvCommit(ctx, wire.CommitRequestToPB(rctx, sub))
		re, err := decode(resp, err)
		if isPrimary {
			mu.Lock()
			switch {
			case re == nil && err == nil:
				primaryDone = true
			case re == nil && indefinite(err):
				primaryMaybe = true // sent, no answer: it may have committed
			}
			mu.Unlock()
		}
		return re, err
	}
	rest := allIdx(len(req.Keys))
	if pi >= 0 {
		bo := c.newBackoffer()
		parts, err := c.group(ctx, bo, req.Keys, []int{pi})
		if err != nil {
			return kvrpc.CommitResponse{}, err
		}
		// The keys in the primary's region commit with it, atomically.
		var first []int
		var others []int
		for _, i := range rest {
			if parts[0].r.contains(req.Keys[i]) {
				first = append(first, i)
			} else {
				others = append(others, i)
			}
		}
		o := c.opts0()
		o.first = pi
		err = c.run(ctx, bo, req.Keys, first, o, fn)
		mu.Lock()
		done, maybe := primaryDone, primaryMaybe
		mu.Unlock()
		if !done {
			if err == nil {
				err = errors.New("tikvclient: primary not committed")
			}
			if maybe && indefinite(err) {
				return kvrpc.CommitResponse{}, &kvrpc.UndeterminedError{Err: err}
			}
			return kvrpc.CommitResponse{}, err
		}
		if err != nil {
			// The primary committed; resend its region's other keys too.
			others = append(others, first...)
		}
		rest = others
	}
	// The transaction is committed once its primary is: what is left is
	// best effort (readers resolve leftover locks through the primary).
	err := c.run(ctx, c.newBackoffer(), req.Keys, rest, c.opts0(), fn)
	if err != nil && pi < 0 {
		return kvrpc.CommitResponse{}, err
	}
	return kvrpc.CommitResponse{}, nil
}

func (c *Client) KvCleanup(ctx context.Context, req kvrpc.CleanupRequest) (kvrpc.CleanupResponse, error) {
	var out kvrpc.CleanupResponse
	err := c.one(ctx, req.Key, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
		resp, err := cl.KvCleanup(ctx, wire.CleanupRequestToPB(rctx, req))
		re, err := decode(resp, err)
		if re == nil && err == nil {
			out = wire.CleanupResponseFromPB(resp)
		}
		return re, err
	})
	return out, err
}

func (c *Client) KvBatchRollback(ctx context.Context, req kvrpc.BatchRollbackRequest) (kvrpc.BatchRollbackResponse, error) {
	err := c.run(ctx, c.newBackoffer(), req.Keys, allIdx(len(req.Keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = pick(req.Keys, p.idx)
			return decode(cl.KvBatchRollback(ctx, wire.BatchRollbackRequestToPB(rctx, sub)))
		})
	return kvrpc.BatchRollbackResponse{}, err
}

func (c *Client) KvCheckTxnStatus(ctx context.Context, req kvrpc.CheckTxnStatusRequest) (kvrpc.CheckTxnStatusResponse, error) {
	var out kvrpc.CheckTxnStatusResponse
	err := c.one(ctx, req.PrimaryKey, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
		resp, err := cl.KvCheckTxnStatus(ctx, wire.CheckTxnStatusRequestToPB(rctx, req))
		re, err := decode(resp, err)
		if re == nil && err == nil {
			out = wire.CheckTxnStatusResponseFromPB(resp)
		}
		return re, err
	})
	return out, err
}

// ErrResolveNeedsKeys: ResolveLock without keys (every lock of the
// transaction in a store) has no single region to go to.
var ErrResolveNeedsKeys = errors.New("tikvclient: ResolveLock needs keys")

// KvCheckSecondaryLocks asks each key's region; a commit ts from any part
// wins, else the locks of all parts are merged.
func (c *Client) KvCheckSecondaryLocks(ctx context.Context, req kvrpc.CheckSecondaryLocksRequest) (kvrpc.CheckSecondaryLocksResponse, error) {
	var mu sync.Mutex
	var out kvrpc.CheckSecondaryLocksResponse
	err := c.run(ctx, c.newBackoffer(), req.Keys, allIdx(len(req.Keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = pick(req.Keys, p.idx)
			resp, err := cl.KvCheckSecondaryLocks(ctx, wire.CheckSecondaryLocksRequestToPB(rctx, sub))
			re, err := decode(resp, err)
			if re == nil && err == nil {
				r := wire.CheckSecondaryLocksResponseFromPB(resp)
				mu.Lock()
				out.Locks = append(out.Locks, r.Locks...)
				out.CommitTS = max(out.CommitTS, r.CommitTS)
				mu.Unlock()
			}
			return re, err
		})
	if err != nil {
		return kvrpc.CheckSecondaryLocksResponse{}, err
	}
	if out.CommitTS != 0 {
		out.Locks = nil
	}
	return out, nil
}

func (c *Client) KvResolveLock(ctx context.Context, req kvrpc.ResolveLockRequest) (kvrpc.ResolveLockResponse, error) {
	if len(req.Keys) == 0 {
		return kvrpc.ResolveLockResponse{}, ErrResolveNeedsKeys
	}
	err := c.run(ctx, c.newBackoffer(), req.Keys, allIdx(len(req.Keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = pick(req.Keys, p.idx)
			return decode(cl.KvResolveLock(ctx, wire.ResolveLockRequestToPB(rctx, sub)))
		})
	return kvrpc.ResolveLockResponse{}, err
}

// KvPessimisticLock locks the primary's region first (if the primary is
// among the keys), then the rest in parallel; on failure it releases the
// locks it took.
func (c *Client) KvPessimisticLock(ctx context.Context, req kvrpc.PessimisticLockRequest) (kvrpc.PessimisticLockResponse, error) {
	keys := make([][]byte, len(req.Keys))
	o := c.opts0()
	o.timeout += req.WaitTimeout
	for i := range req.Keys {
		keys[i] = req.Keys[i].Key
		if o.first < 0 && bytes.Equal(keys[i], req.PrimaryLock) {
			o.first = i
		}
	}
	var mu sync.Mutex
	var out kvrpc.PessimisticLockResponse
	if req.ReturnValues {
		out.Values = make([][]byte, len(keys))
	}
	var locked []int
	err := c.run(ctx, c.newBackoffer(), keys, allIdx(len(keys)), o,
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = make([]kvrpc.PessimisticLockKey, len(p.idx))
			for i, j := range p.idx {
				sub.Keys[i] = req.Keys[j]
			}
			resp, err := cl.KvPessimisticLock(ctx, wire.PessimisticLockRequestToPB(rctx, sub))
			re, err := decode(resp, err)
			if re == nil && err == nil {
				r := wire.PessimisticLockResponseFromPB(resp)
				mu.Lock()
				locked = append(locked, p.idx...)
				if req.ReturnValues && len(r.Values) == len(p.idx) {
					for i, j := range p.idx {
						out.Values[j] = r.Values[i]
					}
				}
				mu.Unlock()
			}
			return re, err
		})
	if err != nil {
		mu.Lock()
		taken := pick(keys, locked)
		mu.Unlock()
		if len(taken) > 0 {
			rctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			_, _ = c.KvPessimisticRollback(rctx, kvrpc.PessimisticRollbackRequest{Keys: taken, StartTS: req.StartTS, ForUpdateTS: req.ForUpdateTS})
			cancel()
		}
		return kvrpc.PessimisticLockResponse{}, err
	}
	return out, nil
}

func (c *Client) KvPessimisticRollback(ctx context.Context, req kvrpc.PessimisticRollbackRequest) (kvrpc.PessimisticRollbackResponse, error) {
	err := c.run(ctx, c.newBackoffer(), req.Keys, allIdx(len(req.Keys)), c.opts0(),
		func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error) {
			sub := req
			sub.Keys = pick(req.Keys, p.idx)
			return decode(cl.KvPessimisticRollback(ctx, wire.PessimisticRollbackRequestToPB(rctx, sub)))
		})
	return kvrpc.PessimisticRollbackResponse{}, err
}

func (c *Client) KvTxnHeartBeat(ctx context.Context, req kvrpc.TxnHeartBeatRequest) (kvrpc.TxnHeartBeatResponse, error) {
	var out kvrpc.TxnHeartBeatResponse
	err := c.one(ctx, req.PrimaryLock, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
		resp, err := cl.KvTxnHeartBeat(ctx, wire.TxnHeartBeatRequestToPB(rctx, req))
		re, err := decode(resp, err)
		if re == nil && err == nil {
			out = wire.TxnHeartBeatResponseFromPB(resp)
		}
		return re, err
	})
	return out, err
}
