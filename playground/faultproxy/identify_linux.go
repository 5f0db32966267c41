//go:build linux

package faultproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// ProcIdentify returns an Identify function that names the owner of a
// connection's client socket among the processes pids lists (name -> pid,
// asked again on every call, so restarted processes are followed): it
// finds the socket's inode in /proc/net/tcp (the entry whose local end is
// the connection's remote address and whose remote end is the proxy) and
// the process whose /proc/PID/fd holds that inode.
func ProcIdentify(pids func() map[string]int) func(remote, local *net.TCPAddr) string {
	return func(remote, local *net.TCPAddr) string {
		inode := socketInode(remote, local)
		if inode == "" {
			return ""
		}
		target := "socket:[" + inode + "]"
		for name, pid := range pids() {
			if pid <= 0 {
				continue
			}
			dir := fmt.Sprintf("/proc/%d/fd", pid)
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && l == target {
					return name
				}
			}
		}
		return ""
	}
}

// procAddr formats an IPv4 address as /proc/net/tcp prints it: the
// address's 32 bits in host byte order, then the port, both in hex.
func procAddr(a *net.TCPAddr) string {
	ip4 := a.IP.To4()
	if ip4 == nil {
		return ""
	}
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip4), a.Port)
}

// socketInode finds the inode of the socket whose local end is from and
// whose remote end is to, or "".
func socketInode(from, to *net.TCPAddr) string {
	lf, lt := procAddr(from), procAddr(to)
	if lf == "" || lt == "" {
		return ""
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[1] != lf || fields[2] != lt {
			continue
		}
		if _, err := strconv.ParseUint(fields[9], 10, 64); err == nil && fields[9] != "0" {
			return fields[9]
		}
	}
	return ""
}
