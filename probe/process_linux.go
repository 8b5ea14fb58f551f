package probe

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal has the kernel kill the server's process (the
// leader of its group) if mcpwatch dies without cleaning up, as on kill -9
// or an OOM kill: otherwise the server would run on, orphaned. A clean exit
// kills the group anyway (see session teardown).
//
// Limits. Linux sends the signal when the thread that forked the child
// ends, not the process: if the OS thread that ran cmd.Start exited while
// mcpwatch lived on, the server would be killed early. The Go runtime keeps
// its threads for the life of the process; it ends one only when a
// goroutine exits while locked to it (runtime.LockOSThread without
// UnlockOSThread), which neither mcpwatch nor its dependencies do, and
// spawn does not run locked. The signal reaches the leader only: a
// grandchild the server started is not signalled, and lives on if it
// ignores the end of its stdin (which closes with mcpwatch) as well; under
// systemd, KillMode=mixed in the unit kills what is left of the service's
// cgroup.
func setParentDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}

// pipeUnread returns how many bytes written to the pipe f (our end of a
// server's stdin) the server has not read yet: Linux answers FIONREAD on
// either end of a pipe. ok is false when it cannot tell.
func pipeUnread(f *os.File) (n int, ok bool) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ioctlErr error
	if err := raw.Control(func(fd uintptr) {
		n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}); err != nil || ioctlErr != nil {
		return 0, false
	}
	return n, true
}
