package storenode

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// adminCall sends a request to node i's admin handler and decodes the
// JSON answer into out.
func (c *testCluster) adminCall(i int, method, path string, out any) int {
	c.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	rec := httptest.NewRecorder()
	c.nodes[i].AdminHandler().ServeHTTP(rec, req)
	if r, ok := out.(*AdminResult); ok {
		*r = AdminResult{} // omitted fields must not keep an earlier call's values
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			c.t.Fatalf("%s %s: %d %q: %v", method, path, rec.Code, rec.Body.String(), err)
		}
	}
	return rec.Code
}

// leaderOf returns the index of the node leading the region that holds
// key k (per the admin listing), or -1.
func (c *testCluster) leaderOf(k []byte) (int, AdminRegion) {
	for i := range c.nodes {
		var regions []AdminRegion
		c.adminCall(i, "GET", "/admin/regions", &regions)
		for _, r := range regions {
			start, _ := hex.DecodeString(r.StartKey)
			end, _ := hex.DecodeString(r.EndKey)
			if r.IsLeader && string(k) >= string(start) && (len(end) == 0 || string(k) < string(end)) {
				return i, r
			}
		}
	}
	return -1, AdminRegion{}
}

func TestAdminTransferLeaderAndSplit(t *testing.T) {
	c := newTestCluster(t, 3)
	c.writeKeys(0, 40, 20, "a", 30*time.Second)
	var li int
	var reg AdminRegion
	c.waitFor("a leader with three voters for k00010", 30*time.Second, func() (bool, string) {
		li, reg = c.leaderOf(key(10))
		voters := 0
		for _, p := range reg.Peers {
			if p.Role == "Voter" {
				voters++
			}
		}
		// A new replica joins as a learner: a transfer to it is refused.
		return li >= 0 && voters == 3, fmt.Sprintf("leader %d region %+v", li, reg)
	})

	// Refusals: bad id, a region the store does not lead, a bad target.
	var res AdminResult
	if code := c.adminCall(li, "POST", "/admin/regions/x/transfer-leader?to-store=1", &res); code != http.StatusBadRequest {
		t.Fatalf("bad id: %d %+v", code, res)
	}
	follower := (li + 1) % 3
	// The hint is the leader, or 0 while the follower has not heard from
	// it yet.
	if code := c.adminCall(follower, "POST", fmt.Sprintf("/admin/regions/%d/split?key=%x", reg.ID, key(20)), &res); code != http.StatusConflict || res.LeaderStoreID != c.nodes[li].StoreID() && res.LeaderStoreID != 0 {
		t.Fatalf("split on a follower: %d %+v (leader store %d)", code, res, c.nodes[li].StoreID())
	}
	if code := c.adminCall(li, "POST", fmt.Sprintf("/admin/regions/%d/transfer-leader?to-store=999", reg.ID), &res); code != http.StatusBadRequest {
		t.Fatalf("transfer to a store without a peer: %d %+v", code, res)
	}
	if code := c.adminCall(li, "POST", fmt.Sprintf("/admin/regions/%d/split?key=zz", reg.ID), &res); code != http.StatusBadRequest {
		t.Fatalf("split at a non-hex key: %d %+v", code, res)
	}

	// A forced transfer moves the leadership to the named store.
	to := c.nodes[follower].StoreID()
	code := c.adminCall(li, "POST", fmt.Sprintf("/admin/regions/%d/transfer-leader?to-store=%d&wait=10s", reg.ID, to), &res)
	if code != http.StatusOK || !res.OK || res.LeaderStoreID != to {
		t.Fatalf("transfer to store %d: %d %+v", to, code, res)
	}
	c.waitFor("the new leader serves", 10*time.Second, func() (bool, string) {
		i, _ := c.leaderOf(key(10))
		return i == follower, fmt.Sprintf("leader node %d", i)
	})

	// A forced split inside the region makes two regions meeting there,
	// and the data on both sides stays readable.
	at := append(key(10), '5')
	code = c.adminCall(follower, "POST", fmt.Sprintf("/admin/regions/%d/split?key=%x", reg.ID, at), &res)
	if code != http.StatusOK || !res.OK {
		t.Fatalf("split: %d %+v", code, res)
	}
	var regions []AdminRegion
	c.adminCall(follower, "GET", "/admin/regions", &regions)
	found := false
	for _, r := range regions {
		found = found || r.StartKey == hex.EncodeToString(at) || r.EndKey == hex.EncodeToString(at)
	}
	if !found {
		t.Fatalf("no region boundary at %q after the split: %+v", at, regions)
	}
	c.checkKeys(0, 40, "a", 30*time.Second)
	// Splitting at the new region's own start key is refused.
	if li, right := c.leaderOf(at); li >= 0 {
		if code := c.adminCall(li, "POST", fmt.Sprintf("/admin/regions/%d/split?key=%x", right.ID, at), &res); code != http.StatusBadRequest {
			t.Fatalf("split at a region's start key: %d %+v", code, res)
		}
	}
}
