package playground

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Port layout relative to BasePort (b):
//
//	b               HAProxy (MySQL clients connect here)
//	b+1   .. b+19   SQL node i: MySQL port b+1+i
//	b+20  .. b+39   SQL node i: status port b+20+i
//	b+40  .. b+49   PD i: client (gRPC) port b+40+i
//	b+50  .. b+59   PD i: peer port b+50+i
//	b+60  .. b+69   PD i: status port b+60+i
//	b+70  .. b+89   store i: gRPC port b+70+i
//	b+90  .. b+109  store i: status port b+90+i
//
// With fault proxies (Layout.WithFaultProxies) the ports above are the
// advertised ones, where the proxies listen; the processes themselves
// listen on:
//
//	b+110 .. b+129  store i: gRPC listen port b+110+i
//	b+130 .. b+139  PD i: client listen port b+130+i
//	b+140 .. b+149  PD i: peer listen port b+140+i
const (
	MaxPD    = 10
	MaxStore = 20
	MaxSQL   = 19
	// PortSpan is how many ports from BasePort a playground may use.
	PortSpan = 150
)

// Layout names the addresses of every process of a topology.
type Layout struct {
	Base    int
	HAProxy string
	SQL     []SQLAddrs
	PD      []PDAddrs
	Store   []StoreAddrs
}

// SQLAddrs are a SQL node's addresses.
type SQLAddrs struct{ MySQL, Status string }

// PDAddrs are a PD member's addresses. Client and Peer are advertised
// (what the others dial); ClientListen and PeerListen are where the
// member listens: the same, unless a fault proxy sits in between.
type PDAddrs struct{ Client, Peer, Status, ClientListen, PeerListen string }

// StoreAddrs are a store's addresses. GRPC is advertised (registered in
// PD); Listen is where the store listens: the same, unless a fault proxy
// sits in between.
type StoreAddrs struct{ GRPC, Status, Listen string }

// Proxied reports whether the layout puts fault proxies in front of the
// stores and PD members.
func (l Layout) Proxied() bool {
	return len(l.Store) > 0 && l.Store[0].Listen != l.Store[0].GRPC
}

// WithFaultProxies returns the layout with the stores' and PD members'
// processes moved to their listen ports (b+110 and up), leaving the
// advertised ports to fault proxies.
func (l Layout) WithFaultProxies() Layout {
	out := l
	out.PD = append([]PDAddrs(nil), l.PD...)
	out.Store = append([]StoreAddrs(nil), l.Store...)
	for i := range out.Store {
		out.Store[i].Listen = addr(l.Base + 110 + i)
	}
	for i := range out.PD {
		out.PD[i].ClientListen = addr(l.Base + 130 + i)
		out.PD[i].PeerListen = addr(l.Base + 140 + i)
	}
	return out
}

func addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// NewLayout computes the addresses of a topology.
func NewLayout(base, pds, stores, sqls int) (Layout, error) {
	var errs []error
	if pds < 1 || pds > MaxPD {
		errs = append(errs, fmt.Errorf("pd count %d out of range 1..%d", pds, MaxPD))
	}
	if stores < 1 || stores > MaxStore {
		errs = append(errs, fmt.Errorf("store count %d out of range 1..%d", stores, MaxStore))
	}
	if sqls < 1 || sqls > MaxSQL {
		errs = append(errs, fmt.Errorf("sql count %d out of range 1..%d", sqls, MaxSQL))
	}
	if base < 1024 || base+PortSpan > 65535 {
		errs = append(errs, fmt.Errorf("base port %d out of range 1024..%d", base, 65535-PortSpan))
	}
	if err := errors.Join(errs...); err != nil {
		return Layout{}, err
	}
	l := Layout{Base: base, HAProxy: addr(base)}
	for i := range sqls {
		l.SQL = append(l.SQL, SQLAddrs{MySQL: addr(base + 1 + i), Status: addr(base + 20 + i)})
	}
	for i := range pds {
		c, p := addr(base+40+i), addr(base+50+i)
		l.PD = append(l.PD, PDAddrs{Client: c, Peer: p, Status: addr(base + 60 + i), ClientListen: c, PeerListen: p})
	}
	for i := range stores {
		g := addr(base + 70 + i)
		l.Store = append(l.Store, StoreAddrs{GRPC: g, Status: addr(base + 90 + i), Listen: g})
	}
	return l, nil
}

// All returns every address of the layout.
func (l Layout) All() []string {
	out := []string{l.HAProxy}
	for _, s := range l.SQL {
		out = append(out, s.MySQL, s.Status)
	}
	for _, p := range l.PD {
		out = append(out, p.Client, p.Peer, p.Status)
		if p.ClientListen != p.Client {
			out = append(out, p.ClientListen)
		}
		if p.PeerListen != p.Peer {
			out = append(out, p.PeerListen)
		}
	}
	for _, s := range l.Store {
		out = append(out, s.GRPC, s.Status)
		if s.Listen != s.GRPC {
			out = append(out, s.Listen)
		}
	}
	return out
}

// CheckFree fails naming every address that cannot be bound now.
func CheckFree(addrs []string) error {
	var busy []error
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			busy = append(busy, fmt.Errorf("port %s is taken: %w", a, err))
			continue
		}
		ln.Close()
	}
	return errors.Join(busy...)
}

// waitPortOpen waits until something accepts TCP connections on a.
func waitPortOpen(a string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", a, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %v: %w", a, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreeBasePort finds a base port whose layout for the topology is free
// right now (another process may still take a port before it is used;
// Start checks again).
func FreeBasePort(pds, stores, sqls int) (int, error) {
	for try := 0; try < 100; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		// Stay below the usual ephemeral range start (32768).
		base := 20000 + p%(32768-20000-PortSpan)
		l, err := NewLayout(base, pds, stores, sqls)
		// Check the ports with fault proxies too (a superset), so the
		// span fits either way.
		if err == nil && CheckFree(l.WithFaultProxies().All()) == nil {
			return base, nil
		}
	}
	return 0, errors.New("no free span of ports found")
}
