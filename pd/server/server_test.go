package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/proto/pdpb"
)

func dial(t *testing.T, addr string) pdpb.PDClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return pdpb.NewPDClient(cc)
}

// TestElectionAndFollowers: one leader; every member names it; followers
// refuse with NOT_LEADER; the leader hands out timestamps.
func TestElectionAndFollowers(t *testing.T) {
	c := pdtest.Start(t, 3, nil)
	li := c.WaitLeader(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, addr := range c.Addrs() {
		cli := dial(t, addr)
		var resp *pdpb.GetMembersResponse
		// A follower learns the leader through its watch: allow a moment.
		for deadline := time.Now().Add(5 * time.Second); ; {
			var err error
			resp, err = cli.GetMembers(ctx, &pdpb.GetMembersRequest{})
			if err != nil {
				t.Fatalf("member %d: GetMembers: %v", i, err)
			}
			if resp.Leader != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(resp.Members) != 3 {
			t.Errorf("member %d lists %d members", i, len(resp.Members))
		}
		if resp.Leader.GetName() != c.Members[li].Name() {
			t.Errorf("member %d names leader %v, want %s", i, resp.Leader, c.Members[li].Name())
		}
		id, err := cli.AllocID(ctx, &pdpb.AllocIDRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if i == li {
			if id.Header.Error != nil || id.Id == 0 {
				t.Errorf("leader AllocID: %v", id)
			}
		} else if id.Header.GetError().GetType() != pdpb.ErrorType_NOT_LEADER {
			t.Errorf("follower %d AllocID answered %v, want NOT_LEADER", i, id.Header)
		}
	}
	stream, err := dial(t, c.Addrs()[li]).Tso(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for range 100 {
		if err := stream.Send(&pdpb.TsoRequest{Count: 10}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		ts := resp.Timestamp.Physical<<18 | resp.Timestamp.Logical
		if first := ts - 9; first <= last || resp.Timestamp.Logical < 9 {
			t.Fatalf("batch %v does not follow %d", resp.Timestamp, last)
		}
		last = ts
	}
	stream.CloseSend()
}

// TestLeaderStopsWithoutQuorum: a leader cut off from the other members
// stops serving once its lease runs out by its own clock, so it can never
// hand out timestamps alongside a successor.
func TestLeaderStopsWithoutQuorum(t *testing.T) {
	c := pdtest.Start(t, 3, nil)
	li := c.WaitLeader(10 * time.Second)
	for i := range c.Members {
		if i != li {
			c.Stop(i)
		}
	}
	leader := c.Members[li]
	deadline := time.Now().Add(10 * time.Second)
	for leader.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("leader kept serving without a quorum")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := dial(t, leader.ClientAddr()).AllocID(ctx, &pdpb.AllocIDRequest{})
	if err == nil && resp.Header.GetError().GetType() != pdpb.ErrorType_NOT_LEADER {
		t.Fatalf("deposed leader answered %v", resp)
	}
}
