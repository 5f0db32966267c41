package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// Service safe points: the answer is the minimum over unexpired entries;
// an entry expires after its TTL and ttl 0 removes one; a report below the
// GC safe point is raised to it; the GC safe point never passes an
// unexpired service safe point; entries survive a leader change.
func TestServiceGCSafePoints(t *testing.T) {
	c := pdtest.Start(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leaderCli := func() pdpb.PDClient { return dial(t, c.Addrs()[c.WaitLeader(20*time.Second)]) }
	cli := leaderCli()
	update := func(id string, ttl int64, sp uint64) *pdpb.UpdateServiceGCSafePointResponse {
		t.Helper()
		resp, err := cli.UpdateServiceGCSafePoint(ctx, &pdpb.UpdateServiceGCSafePointRequest{ServiceId: id, Ttl: ttl, SafePoint: sp})
		if err != nil || resp.Header.Error != nil {
			t.Fatalf("UpdateServiceGCSafePoint(%s, %d, %d): %v %v", id, ttl, sp, resp, err)
		}
		return resp
	}
	check := func(resp *pdpb.UpdateServiceGCSafePointResponse, id string, sp uint64) {
		t.Helper()
		if resp.MinServiceId != id || resp.MinSafePoint != sp {
			t.Fatalf("min service safe point = %s/%d, want %s/%d", resp.MinServiceId, resp.MinSafePoint, id, sp)
		}
	}
	gcSafePoint := func(sp uint64) uint64 {
		t.Helper()
		resp, err := cli.UpdateGCSafePoint(ctx, &pdpb.UpdateGCSafePointRequest{SafePoint: sp})
		if err != nil || resp.Header.Error != nil {
			t.Fatalf("UpdateGCSafePoint(%d): %v %v", sp, resp, err)
		}
		return resp.NewSafePoint
	}

	check(update("sql-1", 600, 500), "sql-1", 500)
	check(update("sql-2", 600, 300), "sql-2", 300)
	check(update("sql-3", 1, 100), "sql-3", 100)
	// The GC safe point stops at the smallest claim.
	if sp := gcSafePoint(1000); sp != 100 {
		t.Fatalf("GC safe point %d, want 100 (sql-3's claim)", sp)
	}
	// sql-3's one-second TTL runs out; sql-2 is the minimum then.
	time.Sleep(2100 * time.Millisecond)
	check(update("sql-1", 600, 500), "sql-2", 300)
	// A claim can move up, and be withdrawn.
	check(update("sql-2", 600, 400), "sql-2", 400)
	check(update("sql-2", 0, 0), "sql-1", 500)
	if sp := gcSafePoint(1000); sp != 500 {
		t.Fatalf("GC safe point %d, want 500 (sql-1's claim)", sp)
	}
	// A report below the GC safe point is recorded at it.
	check(update("sql-4", 600, 7), "sql-1", 500) // not 7: raised to 500 (ties go to the smaller id)
	check(update("sql-4", 0, 0), "sql-1", 500)

	// A new leader knows the claims.
	c.Stop(c.WaitLeader(10 * time.Second))
	cli = leaderCli()
	var resp *pdpb.UpdateServiceGCSafePointResponse
	for deadline := time.Now().Add(20 * time.Second); ; {
		var err error
		resp, err = cli.UpdateServiceGCSafePoint(ctx, &pdpb.UpdateServiceGCSafePointRequest{ServiceId: "sql-5", Ttl: 600, SafePoint: 900})
		if err == nil && resp.Header.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader answers after failover: %v %v", resp, err)
		}
		time.Sleep(100 * time.Millisecond)
		cli = leaderCli()
	}
	check(resp, "sql-1", 500)
	if sp := gcSafePoint(2000); sp != 500 {
		t.Fatalf("GC safe point after failover %d, want 500", sp)
	}
}
