package contracts

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// atCap is a document and a schema whose check costs about the caps: rows
// of ten numbers, each checked by type.
func atCap(b *testing.B, rows int) (Expect, any) {
	var props, row []string
	for i := range 10 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"number"}`, i))
		row = append(row, fmt.Sprintf(`"f%d":%d`, i, i))
	}
	ct := parse(b, `{"input":{},"expect":{"jsonSchema":{"type":"array","items":{"type":"object","properties":{`+strings.Join(props, ",")+`}}}}}`)
	doc := "[" + strings.TrimSuffix(strings.Repeat("{"+strings.Join(row, ",")+"},", rows), ",") + "]"
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		b.Fatal(err)
	}
	return ct.Expect, v
}

// BenchmarkSchemaCheckAtCap measures a check at the step cap, estimate
// included: what a hostile answer can cost at most in steps.
func BenchmarkSchemaCheckAtCap(b *testing.B) {
	e, doc := atCap(b, maxSchemaSteps/11-1)
	c := schemaCost(e.graph, e.schema.Schema(), doc)
	if c.steps > maxSchemaSteps {
		b.Fatalf("the document is over the cap: %.0f steps", c.steps)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, detail := e.checkSchema(context.Background(), doc); !ok {
			b.Fatal(detail)
		}
	}
}

func BenchmarkSchemaEstimateAtCap(b *testing.B) {
	e, doc := atCap(b, maxSchemaSteps/11-1)
	b.ReportAllocs()
	for b.Loop() {
		schemaCost(e.graph, e.schema.Schema(), doc)
	}
}

func BenchmarkSchemaValidateAtCap(b *testing.B) {
	e, doc := atCap(b, maxSchemaSteps/11-1)
	b.ReportAllocs()
	for b.Loop() {
		_ = e.schema.Validate(doc) // fails or not: the cost is measured
	}
}
