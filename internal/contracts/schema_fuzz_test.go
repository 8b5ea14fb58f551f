package contracts

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// FuzzSchemaCheck runs hostile answers through a contract with every
// assertion against the hostile schemas: no hang, no panic, a bounded
// detail, and an estimate that bounds the validator's error.
func FuzzSchemaCheck(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, nested(20), nested(70), `{"a":{"a":{"x":1}}}`, `[[[[1]]],"x",null]`, `{"aa":"x","bb":2,"kids":[{"kids":["s"]}]}`} {
		f.Add(uint8(0), seed)
		f.Add(uint8(1), seed)
	}
	expects := make([]Contract, len(hostileSchemas))
	for i, src := range hostileSchemas {
		expects[i] = parse(f, `{"expect":{"requiredFields":["a"],"maxRows":3,"contains":"x","jsonSchema":`+src+`}}`)
	}
	f.Fuzz(func(t *testing.T, which uint8, doc string) {
		ct := expects[int(which)%len(expects)]
		for _, r := range []*probe.CallResult{structured(doc), text(doc)} {
			out := Run(context.Background(), &fakeCaller{results: []*probe.CallResult{r}}, readOnly, []Contract{ct}, Options{})
			for _, as := range out[0].Last().Assertions {
				if len(as.Detail) > 400 {
					t.Fatalf("detail of %d bytes", len(as.Detail))
				}
			}
		}
		var v any
		if jsonDepth([]byte(doc)) <= maxDocDepth && json.Unmarshal([]byte(doc), &v) == nil {
			assertBounded(t, "fuzz", ct.Expect, v)
		}
	})
}
