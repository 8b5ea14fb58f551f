//go:build !unix

package probe

import "net"

// leanSupported is false where an idle connection cannot be peeked at:
// net/http's transport serves every request there.
const leanSupported = false

func idleConnUsable(net.Conn) bool { return false }
