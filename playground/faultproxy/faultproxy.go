// Package faultproxy cuts TCP traffic between the processes of a local
// cluster, for network-partition faults on 127.0.0.1 without touching the
// host's network configuration.
//
// A Proxy listens on the address a process advertises (its store gRPC
// port, its PD client or peer port) and forwards every connection to the
// port the process really listens on. Every proxy belongs to one Network,
// which knows the cluster's processes by name. Isolate(name) partitions a
// process from all the others in both directions:
//
//   - inbound: the proxies in front of that process drop their
//     connections, and new connections to them are held open without
//     forwarding a byte (a blackhole: the dialer sees a connection that
//     never answers, as across a real partition) until Heal;
//   - outbound: every proxy drops and blackholes the connections that the
//     isolated process itself dialed. Since all traffic is on 127.0.0.1,
//     a proxy tells callers apart by the socket's owner: on Linux the
//     Network's Identify looks the client socket's inode up in
//     /proc/net/tcp and finds the process holding it in /proc/PID/fd.
//
// Invariants: traffic between processes that are not isolated flows
// unchanged; a process is never cut off from itself; Heal(name) closes the
// connections held in the blackhole for that cut, so their dialers
// reconnect through the healed path; Close stops the listener and closes
// every connection. A caller that Identify cannot name (the test harness,
// a tool, or any process on a system without /proc) is never cut on the
// outbound side, only by the inbound cut of the process it talks to.
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Network is the set of proxies of one cluster and its partition state.
type Network struct {
	// Identify names the cluster process that owns the client end of a
	// connection from remote (the accepted connection's remote address)
	// to local (the proxy's address); "" if none does.
	Identify func(remote, local *net.TCPAddr) string

	mu       sync.Mutex
	isolated map[string]bool
	proxies  []*Proxy
}

// NewNetwork returns a network whose callers are named by identify (nil:
// no caller is ever named, so only inbound cuts apply).
func NewNetwork(identify func(remote, local *net.TCPAddr) string) *Network {
	if identify == nil {
		identify = func(remote, local *net.TCPAddr) string { return "" }
	}
	return &Network{Identify: identify, isolated: map[string]bool{}}
}

// cut reports whether a connection from process src to process dst (the
// proxy's owner) must not carry traffic now. Call with n.mu held.
func (n *Network) cut(src, dst string) bool {
	if src == dst && src != "" {
		return false
	}
	return n.isolated[dst] || (src != "" && n.isolated[src])
}

// Isolate partitions the named process from every other one, both ways.
// It returns once the affected connections are closed.
func (n *Network) Isolate(name string) {
	n.mu.Lock()
	n.isolated[name] = true
	proxies := append([]*Proxy(nil), n.proxies...)
	n.mu.Unlock()
	for _, p := range proxies {
		p.enforce()
	}
}

// Heal ends the named process's partition: the blackholed connections of
// the cut are closed, and new connections flow again.
func (n *Network) Heal(name string) {
	n.mu.Lock()
	delete(n.isolated, name)
	proxies := append([]*Proxy(nil), n.proxies...)
	n.mu.Unlock()
	for _, p := range proxies {
		p.enforce()
	}
}

// Isolated lists the processes isolated now.
func (n *Network) Isolated() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for k := range n.isolated {
		out = append(out, k)
	}
	return out
}

// Close closes every proxy of the network.
func (n *Network) Close() error {
	n.mu.Lock()
	proxies := n.proxies
	n.proxies = nil
	n.mu.Unlock()
	var errs []error
	for _, p := range proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Proxy forwards connections from one listen address to one target, on
// behalf of the process Owner.
type Proxy struct {
	Owner  string
	Target string
	net    *Network
	ln     net.Listener

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// conn is one accepted connection: forwarded (upstream set) or held in
// the blackhole (upstream nil).
type conn struct {
	src      string // the calling process, "" if unknown
	down     net.Conn
	upstream net.Conn
	once     sync.Once
}

func (c *conn) close() {
	c.once.Do(func() {
		c.down.Close()
		if c.upstream != nil {
			c.upstream.Close()
		}
	})
}

// Listen starts a proxy on listen (host:port) forwarding to target, in
// front of process owner.
func (n *Network) Listen(owner, listen, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen %s: %w", listen, err)
	}
	p := &Proxy{Owner: owner, Target: target, net: n, ln: ln, conns: map[*conn]struct{}{}}
	n.mu.Lock()
	n.proxies = append(n.proxies, p)
	n.mu.Unlock()
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listen address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve identifies the caller, then forwards or blackholes the
// connection until it ends.
func (p *Proxy) serve(down net.Conn) {
	remote, _ := down.RemoteAddr().(*net.TCPAddr)
	local, _ := down.LocalAddr().(*net.TCPAddr)
	src := ""
	if remote != nil && local != nil {
		src = p.net.Identify(remote, local)
	}
	c := &conn{src: src, down: down}
	p.net.mu.Lock()
	cut := p.net.cut(src, p.Owner)
	p.net.mu.Unlock()
	if !cut {
		up, err := net.DialTimeout("tcp", p.Target, 3*time.Second)
		if err != nil {
			down.Close()
			return
		}
		c.upstream = up
	}
	if !p.add(c) {
		c.close()
		return
	}
	defer p.remove(c)
	if c.upstream == nil {
		// Blackhole: swallow what the caller sends until the cut heals
		// (enforce closes the connection) or the caller gives up.
		_, _ = io.Copy(io.Discard, down)
		c.close()
		return
	}
	// The cut may have begun between the check and add: enforce again.
	p.enforce()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(c.upstream, down); c.close(); done <- struct{}{} }()
	go func() { _, _ = io.Copy(down, c.upstream); c.close(); done <- struct{}{} }()
	<-done
	<-done
}

func (p *Proxy) add(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) remove(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// enforce closes the forwarded connections that are cut now and the
// blackholed ones that are not cut any more.
func (p *Proxy) enforce() {
	p.mu.Lock()
	var drop []*conn
	p.net.mu.Lock()
	for c := range p.conns {
		cut := p.net.cut(c.src, p.Owner)
		if cut == (c.upstream != nil) {
			drop = append(drop, c)
		}
	}
	p.net.mu.Unlock()
	p.mu.Unlock()
	for _, c := range drop {
		c.close()
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}
