//go:build !linux

package probe

import (
	"os"
	"syscall"
)

// setParentDeathSignal does nothing: a parent-death signal is Linux's.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// pipeUnread cannot tell off Linux: a server that ended is then taken to
// have read its request.
func pipeUnread(*os.File) (int, bool) { return 0, false }
