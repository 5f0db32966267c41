package grpcserver_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// lostLeadership is what a raftstore returns when it stops leading before
// proposing: nothing ran.
type lostLeadership struct{}

func (lostLeadership) Error() string { return "not leader any more" }
func (lostLeadership) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{NotLeader: &errorpb.NotLeader{RegionId: 1}}
}

type fakeService struct {
	kvrpc.Client // nil: only the methods below are called
}

func (fakeService) KvGet(context.Context, kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	return kvrpc.GetResponse{}, lostLeadership{}
}

func (fakeService) KvScan(context.Context, kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	return kvrpc.ScanResponse{}, context.DeadlineExceeded
}

// Errors that carry a region error travel as region errors; a store-side
// timeout is a gRPC status, not a key error.
func TestOutcomeMapping(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	grpcserver.New(fakeService{}, grpcserver.AllRegions{}, grpcserver.Options{}).Register(g)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	s := dial(t, lis.Addr().String())
	ctx := testCtx(t)
	rc := &kvrpcpb.Context{RegionId: 1}
	resp, err := s.KvGet(ctx, &kvrpcpb.GetRequest{Context: rc, Key: []byte("a")})
	if err != nil || resp.GetRegionError().GetNotLeader() == nil || resp.Error != nil {
		t.Fatalf("want NotLeader, got %v %v", resp, err)
	}
	if _, err := s.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rc}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
}
