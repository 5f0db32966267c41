//go:build !linux

package playground

import "syscall"

func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
