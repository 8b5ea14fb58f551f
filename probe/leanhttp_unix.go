//go:build unix

package probe

import (
	"net"
	"syscall"
)

// leanSupported says whether idleConnUsable can tell: the lean transport
// is used only where it can.
const leanSupported = true

// idleConnUsable reports whether an idle connection can carry the next
// request: the server has neither closed it nor sent anything since the
// last response. One non-blocking peek at the socket, which net/http's
// reader goroutine, always reading, would have noticed on its own.
func idleConnUsable(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true // nothing to peek at; a closed one fails the request
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	usable := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		// Nothing to read is the one good answer: 0 bytes is the
		// server's close, any byte an answer no request asked for.
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		usable = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && usable
}
