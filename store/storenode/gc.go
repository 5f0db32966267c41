package storenode

import (
	"context"
	"time"
)

// # MVCC GC on a store
//
// A SQL node's GC worker runs the rounds (kv/gcworker): it resolves old
// locks with KvScanLock, raises PD's GC safe point, then sends KvGC to
// each region's leader, which publishes the safe point in its MVCC store
// and proposes the deletions through raft, so every replica applies them.
//
// A follower's MVCC store hears of the safe point only here: the node
// polls PD's GC safe point with its store heartbeats and raises its own
// (it never decreases). So once a follower becomes leader it refuses reads
// below a safe point whose deletions it has applied, within one
// heartbeat interval; within that interval no live transaction reads
// below it anyway (the safe point never passes a SQL node's claim).

// followGCSafePoint raises the MVCC store's safe point to PD's.
func (n *Node) followGCSafePoint() {
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	sp, err := n.pd.GetGCSafePoint(ctx)
	if err != nil {
		if n.ctx.Err() == nil {
			n.log.Debug("reading the GC safe point failed", "err", err)
		}
		return
	}
	n.mvcc.SetGCSafePoint(sp)
}
