package runner

import (
	"time"

	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Unbuilt is the Result of a server that is not probed because its
// target could not be built (err: an unset variable, a secret file that
// cannot be read, an unusable auth: block, a wiring fault: config) or a
// credential it is given has no value now (b.Missing: credential_missing;
// without it, most servers list fewer tools, or public data only, and
// nothing would say why). Either names the server, the file, the variable
// or the credential, never a value.
func Unbuilt(b launch.Built, err error, started time.Time) *probe.Result {
	if err != nil {
		return failed(b, probe.ReasonConfig, err.Error(), started)
	}
	res := failed(b, probe.ReasonCredentialMissing, missingMessage(b.Missing), started)
	res.Credentials = &probe.CredentialStatus{Given: b.Given}
	return res
}
