package playground

import "syscall"

// procAttr: children die with the playground (SIGKILL when the thread that
// started them exits or the playground dies) and get their own process
// group, so a Ctrl-C in the terminal reaches the playground only, which
// then stops them in order.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
