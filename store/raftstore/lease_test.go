package raftstore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestLeaseServesReads: a leader that commits entries serves reads on its
// lease, and keeps the lease while it only reads (empty renewal writes).
func TestLeaseServesReads(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	leader := c.leaderOf(1)
	before := float64(leaseReads.Load())
	// Read for several lease lengths without writing: renewals keep the
	// lease, so most reads skip ReadIndex.
	deadline := time.Now().Add(5 * c.cfg.withDefaults().LeaderLease)
	n := 0
	for time.Now().Before(deadline) {
		if _, err := leader.RegionRead(context.Background(), 1, nil); err != nil {
			t.Fatalf("read on the leader: %v", err)
		}
		n++
		time.Sleep(time.Millisecond)
	}
	if got := float64(leaseReads.Load()) - before; got < float64(n)/2 {
		t.Fatalf("%v of %d reads used the lease; want most", got, n)
	}
}

// TestLeaseNeverOutlivesLeadership: an isolated leader keeps serving
// reads only until its lease ends, never once the majority has elected
// another leader and acknowledged a write there.
func TestLeaseNeverOutlivesLeadership(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.ProposalTimeout = 200 * time.Millisecond })
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	old := c.leaderOf(1)
	oldID := old.StoreID()
	// Keep the lease fresh, then cut the leader off.
	c.mustPut("a", "2")
	f := c.net.AddFilter(Isolate(oldID))
	defer c.net.RemoveFilter(f)

	var ackedAt int64 // monoNow when the majority's write was acknowledged
	stop := make(chan struct{})
	staleRead := make(chan int64, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := monoNow()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, err := old.RegionRead(ctx, 1, nil)
			cancel()
			if err == nil {
				if a := loadAcked(&ackedAt); a != 0 && start > a {
					select {
					case staleRead <- start - a:
					default:
					}
				}
			}
		}
	}()
	c.eventually("a leader in the majority", func() bool {
		for id := uint64(1); id <= 3; id++ {
			if id == oldID {
				continue
			}
			if info, ok := c.store(id).Region(1); ok && info.IsLeader {
				return true
			}
		}
		return false
	})
	var newLeader *Store
	for id := uint64(1); id <= 3; id++ {
		if info, ok := c.store(id).Region(1); ok && info.IsLeader && id != oldID {
			newLeader = c.store(id)
		}
	}
	c.eventually("a write in the majority", func() bool {
		b := newLeader.Engine().NewBatch()
		defer b.Close()
		b.Set(dataKey("a"), []byte("3"))
		return b.Commit(true) == nil
	})
	storeAcked(&ackedAt, monoNow())
	time.Sleep(10 * c.cfg.TickInterval)
	close(stop)
	<-done
	select {
	case d := <-staleRead:
		t.Fatalf("the old leader served a read that began %v after the new leader acknowledged a write", time.Duration(d))
	default:
	}
	if old.router.get(1).leaseValid(monoNow()) {
		t.Fatal("the isolated leader still holds a lease")
	}
}

// TestLeaseDroppedOnTransfer: a leader that starts a leader transfer stops
// serving reads on its lease at once, and takes no lease again in that
// term (the transfer target may campaign at any moment).
func TestLeaseDroppedOnTransfer(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	leader := c.leaderOf(1)
	p := leader.router.get(1)
	c.eventually("a lease", func() bool {
		c.mustPut("a", "2")
		return p.leaseUntil.Load() > monoNow()
	})
	var target uint64
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			target = id
			break
		}
	}
	// Hold back the target's votes and the TimeoutNow, so the transfer
	// stalls in the old leader's term.
	f := c.net.AddFilter(Isolate(target))
	info, _ := c.store(target).Region(1)
	if err := leader.TransferLeader(1, info.PeerID); err != nil {
		t.Fatalf("transfer: %v", err)
	}
	if p.leaseValid(monoNow()) {
		t.Fatal("lease still valid after a transfer began")
	}
	// Writes in the same term (the other follower acknowledges them) do
	// not bring the lease back.
	if cur, _ := leader.Region(1); cur.IsLeader {
		b := leader.Engine().NewBatch()
		b.Set(dataKey("b"), []byte("1"))
		_ = b.Commit(true)
		b.Close()
		if cur, _ := leader.Region(1); cur.IsLeader && p.leaseValid(monoNow()) {
			t.Fatal("a write renewed the lease in the term of a transfer")
		}
	}
	c.net.RemoveFilter(f)
}

func loadAcked(p *int64) int64     { return atomic.LoadInt64(p) }
func storeAcked(p *int64, v int64) { atomic.StoreInt64(p, v) }
