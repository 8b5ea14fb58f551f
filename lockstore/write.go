package lockstore

import "github.com/mcpwatch/mcpwatch/internal/util/atomicfile"

// Write replaces the lock file atomically (see atomicfile.Write): a failed
// write leaves the old lock as it was.
func Write(path string, l *Lock) error {
	return atomicfile.WriteNamed(path, "lock file "+path, l.Marshal())
}
