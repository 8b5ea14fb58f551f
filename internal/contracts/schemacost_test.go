package contracts

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// nested is {"a":{"a":...{}}}, depth levels of objects.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

const (
	// recursiveRef requires "a" at every level: a nested document fails
	// at its innermost object, and the error is wrapped once per level.
	recursiveRef = `{"$defs":{"n":{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"]}},"$ref":"#/$defs/n"}`
	// recursiveAnyOf has two branches that both descend: the validator
	// runs both at every level and joins both errors.
	recursiveAnyOf = `{"$defs":{"n":{"anyOf":[{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["x"]},{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["y"]}]}},"$ref":"#/$defs/n"}`
)

// A hostile answer cannot make a jsonSchema check unbounded: too deep a
// document is not read, too costly a check is not run, and either says so
// in a bounded detail. Before these bounds, the 9,900-level document took
// minutes and the anyOf at depth 16 allocated 4 GB.
func TestSchemaCheckBounded(t *testing.T) {
	cases := []struct {
		name, schema string
		depth        int
		pass         bool
		detail       string
	}{
		{"recursive $ref, 9,900 levels", recursiveRef, 9900, false, "nests 9900 levels deep, more than the 64 mcpwatch reads"},
		{"recursive $ref at the depth cap is checked", recursiveRef, maxDocDepth, false, "required: missing properties"},
		{"recursive anyOf, 8 levels is checked", recursiveAnyOf, 8, false, "anyOf: did not validate"},
		{"recursive anyOf, 16 levels", recursiveAnyOf, 16, false, "not checked: checking this answer against the schema could take"},
		{"recursive anyOf, 60 levels", recursiveAnyOf, 60, false, "not checked: checking this answer against the schema could take"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := run(t, `{"expect":{"jsonSchema":`+c.schema+`}}`, structured(nested(c.depth)))
			as := o.Last().Assertions[1]
			if as.Name != "jsonSchema" || (as.Outcome == Pass) != c.pass || !strings.Contains(as.Detail, c.detail) {
				t.Fatalf("assertion %+v, want pass=%v and a detail containing %q", as, c.pass, c.detail)
			}
			if len(o.Message) > 400 {
				t.Errorf("message of %d bytes", len(o.Message))
			}
		})
	}
}

// Every content assertion skips a document nested too deep, and says why;
// one at the cap is read.
func TestDocDepthCap(t *testing.T) {
	deep := `{"rows":[1],"meta":` + nested(maxDocDepth) + `}`
	o := run(t, `{"expect":{"requiredFields":["rows"],"maxRows":5}}`, text(deep))
	for _, as := range o.Last().Assertions[1:] {
		if as.Outcome != Fail || !strings.Contains(as.Detail, fmt.Sprintf("nests %d levels deep", maxDocDepth+1)) {
			t.Errorf("%+v, want a failure naming the depth", as)
		}
	}
	if o := run(t, `{"expect":{"requiredFields":["a"]}}`, structured(nested(maxDocDepth))); !o.Passed {
		t.Errorf("a document at the cap: %s", o.Message)
	}
	for doc, want := range map[string]int{`1`: 0, `"{["`: 0, `[]`: 1, `{"a":"\"}"}`: 1, `[[{}],[]]`: 3, `{"a":"\\","b":[]}`: 2} {
		if got := jsonDepth([]byte(doc)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", doc, got, want)
		}
	}
}

// The check ends with the call's deadline.
func TestSchemaCheckEndsWithDeadline(t *testing.T) {
	ct := parse(t, `{"expect":{"jsonSchema":{"type":"object"}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var doc any = map[string]any{}
	ok, detail := ct.Expect.checkSchema(ctx, doc)
	// Either the check won the race or the deadline did; never a hang.
	if !ok && detail != "not checked: the call's deadline passed during the check" {
		t.Fatalf("ok=%v detail %q", ok, detail)
	}
}

// A schema that leads back to itself without descending is refused when
// the contract is read: the validator would recurse until the process
// died of a stack overflow on the first answer.
func TestSchemaInPlaceLoopRefused(t *testing.T) {
	for _, schema := range []string{
		`{"$ref":"#"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"anyOf":[{"type":"string"},{"not":{"$ref":"#"}}]}`,
		`{"$defs":{"a":{"$anchor":"x","if":{"$ref":"#x"}}},"$ref":"#/$defs/a"}`,
	} {
		_, err := ParseFile([]byte(`{"tools":{"t":{"expect":{"jsonSchema":` + schema + `}}}}`))
		if err == nil || !strings.Contains(err.Error(), "leads back to itself") {
			t.Errorf("%s: %v", schema, err)
		}
	}
	// Recursion that descends is fine.
	if _, err := ParseFile([]byte(`{"tools":{"t":{"expect":{"jsonSchema":{"properties":{"a":{"$ref":"#"}},"items":{"$ref":"#"}}}}}}`)); err != nil {
		t.Fatal(err)
	}
}

// The estimate reads where the library resolved every reference: JSON
// pointers, anchors, $id-relative refs and dynamic refs. A library whose
// internals changed fails here.
func TestSchemaGraphFollowsLibrary(t *testing.T) {
	var s jsonschema.Schema
	src := `{"$id":"https://example.com/root.json",
		"$defs":{
			"ptr":{"$ref":"#/$defs/target"},
			"anc":{"$ref":"#here"},
			"target":{"$anchor":"here","type":"string"},
			"sub":{"$id":"sub.json","$defs":{"leaf":{"type":"number"}}},
			"rel":{"$ref":"sub.json#/$defs/leaf"},
			"dyn":{"$dynamicRef":"#node"},
			"node":{"$dynamicAnchor":"node","type":"object"}
		}}`
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newSchemaGraph(rs)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Defs
	for from, to := range map[string]*jsonschema.Schema{"ptr": d["target"], "anc": d["target"], "rel": d["sub"].Defs["leaf"]} {
		if g.ref[d[from]] != to {
			t.Errorf("$ref of %s: %p, want %p", from, g.ref[d[from]], to)
		}
	}
	if got := g.dynamic[d["dyn"]]; len(got) != 1 || got[0] != d["node"] {
		t.Errorf("$dynamicRef targets %v", got)
	}
	if g.label[d["target"]] != len("/$defs/target") || g.label[&s] != len(s.ID) {
		t.Errorf("labels %d, %d", g.label[d["target"]], g.label[&s])
	}
}

// hostileSchemas are the schemas the property test and the fuzz target
// check answers against: every keyword the estimate weighs.
var hostileSchemas = []string{
	recursiveRef,
	recursiveAnyOf,
	`{"$defs":{"n":{"oneOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":1},{"type":"number"}]}},"$ref":"#/$defs/n"}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","pattern":"^x+$","maxLength":3}}}`,
	`{"type":"object","patternProperties":{"^a":{"$ref":"#"},"^b":{"enum":[1,"two",[3]]}},"propertyNames":{"minLength":2},"required":["aa","bb"]}`,
	`{"type":"array","prefixItems":[{"const":{"k":[1,2]}},{"type":"string"}],"items":{"anyOf":[{"type":"number","minimum":0.1,"multipleOf":3},{"$ref":"#"}]},"contains":{"type":"null"},"uniqueItems":true}`,
	`{"if":{"type":"object"},"then":{"properties":{"x":{"$ref":"#"}},"unevaluatedProperties":{"not":{"type":"string"}}},"else":{"type":"array","unevaluatedItems":{"$ref":"#"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"items":[{"$ref":"#/definitions/n"}],"additionalItems":{"type":"boolean"},"dependencies":{"a":["b"],"c":{"required":["d"]}}}},"$ref":"#/definitions/n"}`,
	`{"$defs":{"t":{"$dynamicAnchor":"node","anyOf":[{"type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}},{"type":"string"}]}},"$ref":"#/$defs/t"}`,
	`{"type":"object","dependentSchemas":{"a":{"properties":{"a":{"$ref":"#"}}}},"dependentRequired":{"a":["zz"]},"minProperties":2,"maxProperties":3}`,
}

// randomDoc makes a JSON value of at most depth levels from r: the shapes
// the hostile schemas care about.
func randomDoc(r *rand.Rand, depth int) any {
	if depth <= 1 {
		switch r.IntN(5) {
		case 0:
			return float64(r.IntN(7)) / 2
		case 1:
			return strings.Repeat("x\x00é", r.IntN(4))
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		}
		return map[string]any{}
	}
	n := r.IntN(4)
	if r.IntN(2) == 0 {
		a := make([]any, n)
		for i := range a {
			a[i] = randomDoc(r, depth-1-r.IntN(2))
		}
		return a
	}
	keys := []string{"a", "aa", "b", "bb", "c", "d", "x", "kids", "zz", "\"q\""}
	m := map[string]any{}
	for range n + 1 {
		m[keys[r.IntN(len(keys))]] = randomDoc(r, depth-1-r.IntN(2))
	}
	return m
}

// The estimate bounds what the validator builds: its error is never longer
// than the bound, over random documents and every hostile schema.
func TestSchemaCostBoundsError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: seeded, so the documents are the same every run
	for i, src := range hostileSchemas {
		ct := parse(t, `{"expect":{"jsonSchema":`+src+`}}`)
		for range 300 {
			doc := randomDoc(r, 1+r.IntN(7))
			assertBounded(t, fmt.Sprintf("schema %d", i), ct.Expect, doc)
		}
	}
}

func assertBounded(t *testing.T, what string, e Expect, doc any) {
	t.Helper()
	c := schemaCost(e.graph, e.schema.Schema(), doc)
	if c.steps > maxSchemaSteps || c.text() > maxSchemaTextBytes {
		return // not run
	}
	err := e.schema.Validate(doc)
	if err != nil && float64(len(err.Error())) > c.err {
		b, _ := json.Marshal(doc)
		t.Fatalf("%s, document %s: error of %d bytes, over the bound of %.0f: %s", what, b, len(err.Error()), c.err, err)
	}
	if err != nil && c.fail < c.err {
		t.Fatalf("%s: fail %.0f < err %.0f", what, c.fail, c.err)
	}
}
