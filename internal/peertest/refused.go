package peertest

import (
	"fmt"
	"sync"
	"syscall"
)

var refused struct {
	once sync.Once
	url  string
	err  error
}

// RefusedURL is http://127.0.0.1:PORT where PORT refuses every connection
// for the life of the test binary: a socket bound to it that never
// listens. Unlike a closed listener's port, no other test can take it over
// meanwhile, so "the service is down" stays down.
func RefusedURL() string {
	refused.once.Do(func() {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			refused.err = err
			return
		}
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			_ = syscall.Close(fd)
			refused.err = err
			return
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			_ = syscall.Close(fd)
			refused.err = err
			return
		}
		// fd stays open, never listening, until the process exits.
		refused.url = fmt.Sprintf("http://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	})
	if refused.err != nil {
		panic(fmt.Sprintf("peertest: reserve a refusing loopback port: %v", refused.err)) // loopback sockets do not fail to bind port 0
	}
	return refused.url
}
