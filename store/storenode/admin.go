package storenode

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/raftstore"
)

// Admin endpoints on the store's status port, for operators and the chaos
// harness's leader-transfer and split nemeses:
//
//	GET  /admin/regions                                   this store's regions (JSON)
//	POST /admin/regions/{id}/transfer-leader?to-store=N   hand the leadership to store N's peer
//	POST /admin/regions/{id}/split?key=HEX                split at user key HEX
//
// Both POSTs act only on a region this store leads: otherwise they answer
// 409 with the leader this store knows of, 404 if it has no peer of the
// region. transfer-leader waits (up to ?wait=, default 3s) until this
// store is no longer the leader and says whether that happened; split
// waits until the split is applied on this store. Like /debug/pprof, the
// status port is for trusted networks only.

// AdminRegion is one region in the /admin/regions listing.
type AdminRegion struct {
	ID            uint64      `json:"id"`
	StartKey      string      `json:"start_key"` // hex
	EndKey        string      `json:"end_key"`   // hex; "" is unbounded
	ConfVer       uint64      `json:"conf_ver"`
	Version       uint64      `json:"version"`
	Peers         []AdminPeer `json:"peers"`
	PeerID        uint64      `json:"peer_id"` // this store's peer
	LeaderPeerID  uint64      `json:"leader_peer_id,omitempty"`
	LeaderStoreID uint64      `json:"leader_store_id,omitempty"`
	IsLeader      bool        `json:"is_leader"`
}

// AdminPeer is one peer of an AdminRegion.
type AdminPeer struct {
	ID      uint64 `json:"id"`
	StoreID uint64 `json:"store_id"`
	Role    string `json:"role"`
}

// AdminResult is the answer of the POST endpoints.
type AdminResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// LeaderStoreID is the leader this store knows of after the call (or
	// on a 409).
	LeaderStoreID uint64 `json:"leader_store_id,omitempty"`
}

func adminRegion(ri raftstore.RegionInfo) AdminRegion {
	r := ri.Region
	out := AdminRegion{
		ID: r.GetId(), StartKey: hex.EncodeToString(r.GetStartKey()), EndKey: hex.EncodeToString(r.GetEndKey()),
		ConfVer: r.GetRegionEpoch().GetConfVer(), Version: r.GetRegionEpoch().GetVersion(),
		PeerID: ri.PeerID, IsLeader: ri.IsLeader,
	}
	for _, p := range r.GetPeers() {
		out.Peers = append(out.Peers, AdminPeer{ID: p.GetId(), StoreID: p.GetStoreId(), Role: p.GetRole().String()})
	}
	if ri.Leader != nil {
		out.LeaderPeerID, out.LeaderStoreID = ri.Leader.GetId(), ri.Leader.GetStoreId()
	}
	return out
}

// AdminHandler serves the /admin/ endpoints.
func (n *Node) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/regions", n.adminRegions)
	mux.HandleFunc("POST /admin/regions/{id}/transfer-leader", n.adminTransferLeader)
	mux.HandleFunc("POST /admin/regions/{id}/split", n.adminSplit)
	return mux
}

func (n *Node) adminRegions(w http.ResponseWriter, r *http.Request) {
	var out []AdminRegion
	for _, ri := range n.rs.Regions() {
		out = append(out, adminRegion(ri))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartKey < out[j].StartKey })
	writeAdmin(w, http.StatusOK, out)
}

// adminLeaderRegion finds a region this store leads, or answers the
// request with why not.
func (n *Node) adminLeaderRegion(w http.ResponseWriter, r *http.Request) (raftstore.RegionInfo, bool) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		writeAdmin(w, http.StatusBadRequest, AdminResult{Error: fmt.Sprintf("region id %q: %v", r.PathValue("id"), err)})
		return raftstore.RegionInfo{}, false
	}
	ri, ok := n.rs.Region(id)
	if !ok {
		writeAdmin(w, http.StatusNotFound, AdminResult{Error: fmt.Sprintf("store %d has no peer of region %d", n.StoreID(), id)})
		return ri, false
	}
	if !ri.IsLeader {
		writeAdmin(w, http.StatusConflict, AdminResult{Error: fmt.Sprintf("store %d does not lead region %d", n.StoreID(), id),
			LeaderStoreID: ri.Leader.GetStoreId()})
		return ri, false
	}
	return ri, true
}

func (n *Node) adminTransferLeader(w http.ResponseWriter, r *http.Request) {
	ri, ok := n.adminLeaderRegion(w, r)
	if !ok {
		return
	}
	to, err := strconv.ParseUint(r.URL.Query().Get("to-store"), 10, 64)
	if err != nil {
		writeAdmin(w, http.StatusBadRequest, AdminResult{Error: "to-store: " + err.Error()})
		return
	}
	wait := 3 * time.Second
	if s := r.URL.Query().Get("wait"); s != "" {
		if wait, err = time.ParseDuration(s); err != nil || wait < 0 || wait > time.Minute {
			writeAdmin(w, http.StatusBadRequest, AdminResult{Error: fmt.Sprintf("wait %q: a duration up to 1m", s)})
			return
		}
	}
	var target *metapb.Peer
	for _, p := range ri.Region.GetPeers() {
		if p.GetStoreId() == to && p.GetRole() == metapb.PeerRole_Voter {
			target = p
		}
	}
	if target == nil || to == n.StoreID() {
		writeAdmin(w, http.StatusBadRequest, AdminResult{Error: fmt.Sprintf("region %d has no voter on store %d other than this one", ri.Region.GetId(), to)})
		return
	}
	if err := n.rs.TransferLeader(ri.Region.GetId(), target.GetId()); err != nil {
		writeAdminErr(w, err)
		return
	}
	deadline := time.Now().Add(wait)
	for {
		cur, ok := n.rs.Region(ri.Region.GetId())
		// Done once this store stepped down and knows who leads now (the
		// new leader's first message), or when the deadline passes knowing
		// only that it stepped down.
		steppedDown := ok && !cur.IsLeader
		if !ok || steppedDown && (cur.Leader.GetStoreId() != 0 || time.Now().After(deadline)) {
			res := AdminResult{OK: ok, LeaderStoreID: cur.Leader.GetStoreId()}
			if !ok {
				res.Error = "region left this store"
			}
			writeAdmin(w, http.StatusOK, res)
			return
		}
		if r.Context().Err() != nil {
			return // the caller is gone
		}
		if !steppedDown && time.Now().After(deadline) {
			writeAdmin(w, http.StatusOK, AdminResult{Error: fmt.Sprintf("still the leader after %s (raft abandons a transfer the target cannot catch up with)", wait),
				LeaderStoreID: n.StoreID()})
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *Node) adminSplit(w http.ResponseWriter, r *http.Request) {
	ri, ok := n.adminLeaderRegion(w, r)
	if !ok {
		return
	}
	key, err := hex.DecodeString(r.URL.Query().Get("key"))
	if err != nil || len(key) == 0 {
		writeAdmin(w, http.StatusBadRequest, AdminResult{Error: fmt.Sprintf("key %q: want a non-empty hex string", r.URL.Query().Get("key"))})
		return
	}
	reg := ri.Region
	if string(key) <= string(reg.GetStartKey()) || (len(reg.GetEndKey()) > 0 && string(key) >= string(reg.GetEndKey())) {
		writeAdmin(w, http.StatusBadRequest, AdminResult{Error: fmt.Sprintf("key %x is not strictly inside region %d [%x, %x)",
			key, reg.GetId(), reg.GetStartKey(), reg.GetEndKey())})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	if err := n.rs.SplitRegion(ctx, reg.GetId(), key); err != nil {
		writeAdminErr(w, err)
		return
	}
	writeAdmin(w, http.StatusOK, AdminResult{OK: true, LeaderStoreID: n.StoreID()})
}

// writeAdminErr maps raftstore errors to HTTP statuses.
func writeAdminErr(w http.ResponseWriter, err error) {
	var nl *raftstore.NotLeaderError
	var nf *raftstore.RegionNotFoundError
	switch {
	case errors.As(err, &nl):
		writeAdmin(w, http.StatusConflict, AdminResult{Error: err.Error(), LeaderStoreID: nl.Msg.GetLeader().GetStoreId()})
	case errors.As(err, &nf):
		writeAdmin(w, http.StatusNotFound, AdminResult{Error: err.Error()})
	case errors.Is(err, context.DeadlineExceeded):
		writeAdmin(w, http.StatusGatewayTimeout, AdminResult{Error: err.Error()})
	default:
		writeAdmin(w, http.StatusInternalServerError, AdminResult{Error: err.Error()})
	}
}

func writeAdmin(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
