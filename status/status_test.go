package status

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStatusEndpoints(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(ln, Info{Role: "server", Version: "v-test", StartTime: time.Now().Add(-time.Second), EnablePprof: true})
	defer s.Close()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st.Role != "server" || st.Version != "v-test" || st.UptimeSeconds < 1 {
		t.Fatalf("%+v", st)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if path == "/metrics" && !strings.Contains(string(body), "go_goroutines") {
			t.Fatalf("metrics without go_goroutines")
		}
	}
}

func TestPprofOffByDefault(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(ln, Info{Role: "server", StartTime: time.Now()})
	defer s.Close()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline"} {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s without EnablePprof: %d, want 404", path, resp.StatusCode)
		}
	}
}
