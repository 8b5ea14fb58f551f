package contracts

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The recorded answers of the pinned npm servers (GitHub, Slack, Brave
// Search, PostgreSQL), with good and with wrong or revoked credentials,
// judged as a canary call judges them: every rejection is
// credential_rejected, quoting the server; every good answer passes; and
// not_error_code: [401, 403] fails on each rejection, however the server
// words it.
func TestRecordedResponses(t *testing.T) {
	t.Parallel()
	responses, err := peertest.LoadResponses()
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range responses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tools := []probe.Tool{{Name: r.Tool}}
			for _, contract := range []string{`{"allowSideEffects":true}`, `{"allowSideEffects":true,"expect":{"not_error_code":[401,403]}}`} {
				c := parse(t, contract)
				c.Tool = r.Tool
				out := Run(context.Background(), &fakeCaller{results: []*probe.CallResult{r.Call}}, tools, []Contract{c},
					Options{Destructive: func(string) bool { return true }, Credentials: []string{"env:TOKEN"}})[0]
				if r.Rejected {
					if out.Reason != probe.ReasonCredentialRejected || out.Rejection == nil || out.Rejection.Quote == "" {
						t.Fatalf("%s: reason %q, rejection %+v; want credential_rejected with the server's words", contract, out.Reason, out.Rejection)
					}
					if !strings.Contains(out.Message, out.Rejection.Quote) {
						t.Errorf("message %q does not quote the server (%q)", out.Message, out.Rejection.Quote)
					}
					if strings.Contains(contract, "not_error_code") && !failed(out, "not_error_code") {
						t.Errorf("not_error_code [401, 403] passed on a rejected credential: %+v", out.Last().Assertions)
					}
				} else if !out.Passed {
					t.Errorf("%s: a good answer failed: %s: %s", contract, out.Reason, out.Message)
				}
			}
		})
	}
}

func failed(o Outcome, assertion string) bool {
	for _, a := range o.Last().Assertions {
		if a.Name == assertion && a.Outcome == Fail {
			return true
		}
	}
	return false
}
