//go:build !linux

package faultproxy

import "net"

// ProcIdentify needs /proc (Linux); elsewhere no caller is named, so only
// inbound cuts apply.
func ProcIdentify(pids func() map[string]int) func(remote, local *net.TCPAddr) string {
	return func(remote, local *net.TCPAddr) string { return "" }
}
