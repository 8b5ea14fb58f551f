//go:build !linux

package probe

import "syscall"

// setParentDeathSignal does nothing: a parent-death signal is Linux's.
func setParentDeathSignal(*syscall.SysProcAttr) {}
