package nemesis

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeNode struct {
	name     string
	mu       sync.Mutex
	isolated bool
}

func (n *fakeNode) Name() string                      { return n.name }
func (n *fakeNode) Kill() error                       { return nil }
func (n *fakeNode) Restart(ctx context.Context) error { return nil }
func (n *fakeNode) Pause() error                      { return nil }
func (n *fakeNode) Resume() error                     { return nil }
func (n *fakeNode) Isolate() error                    { n.mu.Lock(); n.isolated = true; n.mu.Unlock(); return nil }
func (n *fakeNode) Heal() error                       { n.mu.Lock(); n.isolated = false; n.mu.Unlock(); return nil }

// plainNode cannot be partitioned (the embedded server).
type plainNode struct{ name string }

func (n plainNode) Name() string                      { return n.name }
func (n plainNode) Kill() error                       { return nil }
func (n plainNode) Restart(ctx context.Context) error { return nil }
func (n plainNode) Pause() error                      { return nil }
func (n plainNode) Resume() error                     { return nil }

func TestPartitionIsolatesThenHeals(t *testing.T) {
	a, b := &fakeNode{name: "store-1"}, &fakeNode{name: "pd-1"}
	nm, err := New("partition", []Node{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := nm.Start(ctx, rand.New(rand.NewSource(1)))
	if err != nil || !strings.HasPrefix(d, "isolated ") {
		t.Fatalf("start: %q %v", d, err)
	}
	if a.isolated == b.isolated {
		t.Fatalf("want exactly one isolated node: %v %v", a.isolated, b.isolated)
	}
	if d, _ := nm.Start(ctx, rand.New(rand.NewSource(2))); d != "" {
		t.Fatalf("second start while active did %q", d)
	}
	if d, err := nm.Stop(ctx); err != nil || !strings.HasPrefix(d, "healed ") || a.isolated || b.isolated {
		t.Fatalf("stop: %q %v (isolated %v %v)", d, err, a.isolated, b.isolated)
	}
	if d, err := nm.Stop(ctx); d != "" || err != nil {
		t.Fatalf("stop while inactive: %q %v", d, err)
	}
}

func TestClusterNemesesRefuseEmbedded(t *testing.T) {
	for _, name := range []string{"partition", "transfer", "split"} {
		if _, err := New(name, []Node{plainNode{"server"}}, nil); !errors.Is(err, ErrNeedsCluster) {
			t.Errorf("%s on the embedded server: %v", name, err)
		}
	}
	if _, err := New("flood", nil, nil); err == nil {
		t.Error("unknown nemesis accepted")
	}
}

type fakeRegions struct {
	mu         sync.Mutex
	transfers  int
	splitCalls int
}

func (f *fakeRegions) TransferLeader(ctx context.Context, rng *rand.Rand) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transfers++
	return "region 2 leader store-1 -> store 2", nil
}

func (f *fakeRegions) Split(ctx context.Context, rng *rand.Rand) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.splitCalls++
	return "", errors.New("not leader")
}

// Region nemeses keep making changes from Start to Stop and count the
// refused ones without failing.
func TestRegionNemesesRunUntilStopped(t *testing.T) {
	f := &fakeRegions{}
	tr, _ := New("transfer", nil, f)
	sp, _ := New("split", nil, f)
	ctx := context.Background()
	for _, nm := range []Nemesis{tr, sp} {
		if _, err := nm.Start(ctx, rand.New(rand.NewSource(3))); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1200 * time.Millisecond)
	dt, err := tr.Stop(ctx)
	if err != nil || !strings.Contains(dt, "refused") || strings.Contains(dt, " 0 done") {
		t.Fatalf("transfer stop: %q %v", dt, err)
	}
	ds, err := sp.Stop(ctx)
	if err != nil || !strings.Contains(ds, "0 done") || !strings.Contains(ds, "not leader") {
		t.Fatalf("split stop: %q %v", ds, err)
	}
	f.mu.Lock()
	n := f.transfers
	f.mu.Unlock()
	if n < 2 {
		t.Fatalf("%d transfers in 1.2 s, want several", n)
	}
	time.Sleep(800 * time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.transfers != n {
		t.Fatal("transfers went on after Stop")
	}
}
