package playground

import (
	"fmt"
	"os/exec"
	"strings"
)

// HAProxyConfig renders the HAProxy configuration: one TCP listener on
// bind balancing the SQL nodes by least connections, each health-checked
// every 2 s (up after 2 good checks, down after 3 failed ones), as in the
// reference reports. No daemon mode: the playground supervises it.
func HAProxyConfig(bind string, sqlAddrs []string) string {
	var b strings.Builder
	b.WriteString(`# Written by shoal playground.
global
   maxconn 4000

defaults
   mode tcp
   retries 2
   timeout connect 2s
   timeout client 30000s
   timeout server 30000s

listen shoal-cluster
`)
	fmt.Fprintf(&b, "   bind %s\n", bind)
	b.WriteString("   mode tcp\n   balance leastconn\n")
	for i, a := range sqlAddrs {
		fmt.Fprintf(&b, "   server shoal-sql-%d %s check inter 2000 rise 2 fall 3\n", i+1, a)
	}
	return b.String()
}

// FindHAProxy returns the haproxy binary to run: path if given, else
// haproxy from PATH or /usr/sbin. The error says how to install it.
func FindHAProxy(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("haproxy %q: %w", path, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("/usr/sbin/haproxy"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("haproxy not found: install it (Debian: apt-get install haproxy) or pass --haproxy PATH")
}
