package chaos

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/storenode"
)

// regionAdmin makes the playground's forced region changes through the
// stores' admin endpoints (store/storenode/admin.go): it lists every
// store's regions, picks a random region some store leads, and asks that
// store to transfer the leadership to another voter or to split the
// region at a key that holds data (found with a key-only KvScan at a PD
// timestamp, so splits cut through the workloads' tables rather than empty
// key space).
type regionAdmin struct {
	// stores returns each running store's name and status address.
	stores  func() map[string]string
	pdAddrs []string

	mu    sync.Mutex
	pdc   *pdclient.Client
	conns map[string]*grpc.ClientConn // by store gRPC address
}

var adminHTTP = &http.Client{Timeout: 20 * time.Second}

// leadRegion is a region together with the status address of the store
// leading it.
type leadRegion struct {
	storenode.AdminRegion
	store, status string
}

// leaders lists the regions led by some store (in the stores' own view).
func (a *regionAdmin) leaders(ctx context.Context) ([]leadRegion, error) {
	var out []leadRegion
	var errs []error
	for name, st := range a.stores() {
		var regions []storenode.AdminRegion
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second) // a paused store does not answer
		err := adminDo(lctx, "GET", "http://"+st+"/admin/regions", &regions)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		for _, r := range regions {
			if r.IsLeader {
				out = append(out, leadRegion{AdminRegion: r, store: name, status: st})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no store reports a region it leads: %w", errors.Join(errs...))
	}
	return out, nil
}

func adminDo(ctx context.Context, method, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := adminHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, out)
}

// TransferLeader hands a random led region's leadership to a random other
// voter (nemesis.RegionAdmin).
func (a *regionAdmin) TransferLeader(ctx context.Context, rng *rand.Rand) (string, error) {
	regions, err := a.leaders(ctx)
	if err != nil {
		return "", err
	}
	r := regions[rng.Intn(len(regions))]
	var targets []uint64
	for _, p := range r.Peers {
		if p.StoreID != r.LeaderStoreID && p.Role == metapb.PeerRole_Voter.String() {
			targets = append(targets, p.StoreID)
		}
	}
	if len(targets) == 0 {
		return "", fmt.Errorf("region %d has no other voter", r.ID)
	}
	to := targets[rng.Intn(len(targets))]
	var res storenode.AdminResult
	url := fmt.Sprintf("http://%s/admin/regions/%d/transfer-leader?to-store=%d&wait=3s", r.status, r.ID, to)
	if err := adminDo(ctx, "POST", url, &res); err != nil {
		return "", err
	}
	if !res.OK {
		return "", fmt.Errorf("transfer of region %d from %s to store %d: %s", r.ID, r.store, to, res.Error)
	}
	return fmt.Sprintf("region %d leader %s -> store id %d", r.ID, r.store, res.LeaderStoreID), nil
}

// Split splits a random led region at one of its keys (nemesis.RegionAdmin).
func (a *regionAdmin) Split(ctx context.Context, rng *rand.Rand) (string, error) {
	regions, err := a.leaders(ctx)
	if err != nil {
		return "", err
	}
	r := regions[rng.Intn(len(regions))]
	start, _ := hex.DecodeString(r.StartKey)
	end, _ := hex.DecodeString(r.EndKey)
	keys, err := a.sampleKeys(ctx, r, start, end)
	if err != nil {
		return "", fmt.Errorf("keys of region %d: %w", r.ID, err)
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("region %d holds no key to split at", r.ID)
	}
	key := keys[rng.Intn(len(keys))]
	if bytes.Compare(key, start) <= 0 {
		key = append(append([]byte(nil), key...), 0) // just past the region's first key
	}
	if len(end) > 0 && bytes.Compare(key, end) >= 0 {
		return "", fmt.Errorf("region %d: no key strictly inside it", r.ID)
	}
	var res storenode.AdminResult
	url := fmt.Sprintf("http://%s/admin/regions/%d/split?key=%x", r.status, r.ID, key)
	if err := adminDo(ctx, "POST", url, &res); err != nil {
		return "", err
	}
	return fmt.Sprintf("region %d split at %q on %s", r.ID, key, r.store), nil
}

// sampleKeys reads up to 2000 keys of a region from its leader (key-only
// KvScan at a fresh PD timestamp).
func (a *regionAdmin) sampleKeys(ctx context.Context, r leadRegion, start, end []byte) ([][]byte, error) {
	pdc, err := a.pd(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := pdc.GetTS(ctx)
	if err != nil {
		return nil, err
	}
	st, err := pdc.GetStore(ctx, r.LeaderStoreID)
	if err != nil {
		return nil, err
	}
	cc, err := a.conn(st.GetAddress())
	if err != nil {
		return nil, err
	}
	resp, err := tikvpb.NewTikvClient(cc).KvScan(ctx, &kvrpcpb.ScanRequest{
		Context: &kvrpcpb.Context{RegionId: r.ID,
			RegionEpoch: &metapb.RegionEpoch{ConfVer: r.ConfVer, Version: r.Version},
			Peer:        &metapb.Peer{Id: r.LeaderPeerID, StoreId: r.LeaderStoreID}},
		StartKey: start, EndKey: end, Limit: 2000, Version: ts, KeyOnly: true,
	})
	if err != nil {
		return nil, err
	}
	if e := resp.GetRegionError(); e != nil {
		return nil, fmt.Errorf("region error: %s", e.GetMessage())
	}
	if e := resp.GetError(); e != nil {
		return nil, fmt.Errorf("key error: %v", e)
	}
	var keys [][]byte
	for _, p := range resp.GetPairs() {
		keys = append(keys, p.GetKey())
	}
	return keys, nil
}

func (a *regionAdmin) pd(ctx context.Context) (*pdclient.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pdc != nil {
		return a.pdc, nil
	}
	pdc, err := pdclient.New(ctx, a.pdAddrs, pdclient.Options{RetryTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	a.pdc = pdc
	return pdc, nil
}

func (a *regionAdmin) conn(addr string) (*grpc.ClientConn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cc := a.conns[addr]; cc != nil {
		return cc, nil
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	if a.conns == nil {
		a.conns = map[string]*grpc.ClientConn{}
	}
	a.conns[addr] = cc
	return cc, nil
}

// close releases the PD client and gRPC connections.
func (a *regionAdmin) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pdc != nil {
		a.pdc.Close()
		a.pdc = nil
	}
	for _, cc := range a.conns {
		cc.Close()
	}
	a.conns = nil
}
