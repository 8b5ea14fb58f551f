package contracts

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// A call that got no answer fails with the reason its request failed with,
// as the probe's own would: a certificate the server's TLS presents is not
// a broken connection, and mcpwatch giving up (shutdown) is not the
// server's timeout.
func TestCallFailsWithTheProbesReason(t *testing.T) {
	t.Parallel()
	for _, reason := range []probe.Reason{
		probe.ReasonTLS, probe.ReasonCanceled, probe.ReasonClosed, probe.ReasonExited, probe.ReasonTooLarge,
		probe.ReasonConnection, probe.ReasonTimeout, probe.ReasonProtocol, probe.ReasonHTTPStatus,
	} {
		t.Run(string(reason), func(t *testing.T) {
			t.Parallel()
			failed := &probe.CallResult{Reason: reason, Error: "tools/call: " + string(reason)}
			o := Run(context.Background(), &fakeCaller{results: []*probe.CallResult{failed}}, readOnly, []Contract{parse(t, `{}`)}, Options{})[0]
			if o.Passed || string(o.Reason) != string(reason) {
				t.Errorf("passed=%v reason %q, want a failure %q: %s", o.Passed, o.Reason, reason, o.Message)
			}
			if !slices.Contains(Reasons, o.Reason) {
				t.Errorf("reason %q is not in Reasons: the metrics would not count it", o.Reason)
			}
		})
	}
}
