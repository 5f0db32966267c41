package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// echoServer echoes every line back; it stops with the test.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes a line and waits up to d for it to come back.
func roundTrip(c net.Conn, r *bufio.Reader, d time.Duration) error {
	_ = c.SetDeadline(time.Now().Add(d))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "ping\n" {
		return errors.New("echo mismatch: " + line)
	}
	return nil
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// selfNetwork names this test process "client" (when /proc can tell) and
// puts a proxy owned by "server" in front of an echo server.
func selfNetwork(t *testing.T) (*Network, *Proxy) {
	n := NewNetwork(ProcIdentify(func() map[string]int { return map[string]int{"client": os.Getpid()} }))
	t.Cleanup(func() { n.Close() })
	p, err := n.Listen("server", "127.0.0.1:0", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	return n, p
}

func TestForwards(t *testing.T) {
	_, p := selfNetwork(t)
	c, r := dial(t, p.Addr())
	for i := 0; i < 3; i++ {
		if err := roundTrip(c, r, 2*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCut isolates name and checks that the open connection is dropped,
// a new one is blackholed (accepted, never answered), and that after the
// heal the blackholed one is closed and a new one works.
func checkCut(t *testing.T, n *Network, p *Proxy, name string) {
	t.Helper()
	c, r := dial(t, p.Addr())
	if err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	n.Isolate(name)
	if err := roundTrip(c, r, 2*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("open connection after Isolate(%s): want it dropped, got %v", name, err)
	}
	held, hr := dial(t, p.Addr())
	if err := roundTrip(held, hr, 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("new connection during the cut: want a timeout (blackhole), got %v", err)
	}
	n.Heal(name)
	_ = held.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := hr.ReadString('\n'); err == nil || isTimeout(err) {
		t.Fatalf("blackholed connection after Heal: want it closed, got %v", err)
	}
	c2, r2 := dial(t, p.Addr())
	if err := roundTrip(c2, r2, 2*time.Second); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

func TestIsolateOwnerCutsInbound(t *testing.T) {
	n, p := selfNetwork(t)
	checkCut(t, n, p, "server")
}

func TestIsolateCallerCutsOutbound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("callers are identified through /proc")
	}
	n, p := selfNetwork(t)
	checkCut(t, n, p, "client")
}

func TestIsolatingAnotherProcessLeavesTrafficAlone(t *testing.T) {
	n, p := selfNetwork(t)
	c, r := dial(t, p.Addr())
	n.Isolate("store-9")
	defer n.Heal("store-9")
	if err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	c2, r2 := dial(t, p.Addr())
	if err := roundTrip(c2, r2, 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestProcIdentify(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	remote, local := s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr)
	id := ProcIdentify(func() map[string]int { return map[string]int{"init": 1, "me": os.Getpid()} })
	if got := id(remote, local); got != "me" {
		t.Fatalf("identify: got %q, want me", got)
	}
	id = ProcIdentify(func() map[string]int { return map[string]int{"init": 1} })
	if got := id(remote, local); got != "" {
		t.Fatalf("identify without this process listed: got %q, want none", got)
	}
}
