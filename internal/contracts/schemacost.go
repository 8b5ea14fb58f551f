package contracts

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// The cost of a jsonSchema assertion is bounded before it runs.
//
// The validator (github.com/google/jsonschema-go) takes no context and has
// no limits, and its work grows with the schema times the document: a
// recursive $ref walks every level of a deep document and wraps its error
// once per level, copying it each time (a 9,900-level document took minutes);
// an anyOf whose two branches both recurse runs both at every level and
// joins both errors, so work and error text double per level (4 GB
// allocated at depth 16). The server picks the document. So before
// validating, schemaCost walks the document with the schema the way the
// validator will, memoized on (schema, value) so the walk itself stays
// linear, and bounds from above the validator's steps and the bytes of error
// text it may build; a check over either cap is not run and fails, saying
// so. The bound follows validate.go of jsonschema-go v0.4.3 keyword by
// keyword; a test pins it to the library's behaviour.

// Caps on one jsonSchema check. A check within them runs in well under a
// second on a slow machine (see BenchmarkSchemaCheckAtCap).
const (
	maxSchemaSteps     = 250_000        // calls of the validator's recursive validate
	maxSchemaTextBytes = 16 << 20       // bytes of error text built, failed branches included
	maxCostPairs       = maxSchemaSteps // (schema, value) pairs the estimate weighs: fewer than the steps
)

// schemaGraph is what the cost estimate needs of a resolved schema besides
// its fields: where each $ref and $dynamicRef leads, how long the name of a
// schema is in the validator's errors, and the compiled patternProperties.
type schemaGraph struct {
	ref      map[*jsonschema.Schema]*jsonschema.Schema   // a $ref's target
	dynamic  map[*jsonschema.Schema][]*jsonschema.Schema // a $dynamicRef's possible targets (the validator picks one)
	label    map[*jsonschema.Schema]int                  // length of the schema's name in "validating NAME: ..."
	fixed    map[*jsonschema.Schema]float64              // bytes of its own error messages that do not depend on the value
	patterns map[*jsonschema.Schema][]propertyPattern
}

type propertyPattern struct {
	re     *regexp.Regexp
	schema *jsonschema.Schema
}

// newSchemaGraph reads a resolved schema for the cost estimate. It refuses a
// schema that refers back to itself without descending into the document
// ({"$ref": "#"}): the validator would recurse until the process dies.
func newSchemaGraph(rs *jsonschema.Resolved) (*schemaGraph, error) {
	g := &schemaGraph{
		ref:      map[*jsonschema.Schema]*jsonschema.Schema{},
		dynamic:  map[*jsonschema.Schema][]*jsonschema.Schema{},
		label:    map[*jsonschema.Schema]int{},
		fixed:    map[*jsonschema.Schema]float64{},
		patterns: map[*jsonschema.Schema][]propertyPattern{},
	}
	byAddr := map[uintptr]*jsonschema.Schema{}
	anchors := map[string][]*jsonschema.Schema{}
	var err error
	eachSchema(rs.Schema(), func(s *jsonschema.Schema) {
		byAddr[reflect.ValueOf(s).Pointer()] = s
		if s.DynamicAnchor != "" {
			anchors[s.DynamicAnchor] = append(anchors[s.DynamicAnchor], s)
		}
		g.fixed[s] = fixedText(s)
		for p, ps := range s.PatternProperties {
			re, cerr := regexp.Compile(p)
			if cerr != nil {
				err = fmt.Errorf("patternProperties %q: %w", p, cerr) // the library refused it already
			}
			g.patterns[s] = append(g.patterns[s], propertyPattern{re, ps})
		}
	})
	if err != nil {
		return nil, err
	}
	if err := g.readResolution(rs, byAddr, anchors); err != nil {
		return nil, err
	}
	if s := g.inPlaceLoop(rs.Schema()); s != nil {
		return nil, fmt.Errorf("the schema at %s leads back to itself through $ref, allOf, anyOf, oneOf, not or if/then/else without descending into the document: checking any answer would never end", g.name(s))
	}
	return g, nil
}

// readResolution reads where the library resolved each reference, and each
// schema's name in its errors. The library keeps both unexported (its
// resolvedInfos): they are read, never written, through reflection, so the
// estimate follows the library's own resolution of $ref, $id and anchors
// instead of a second copy of those rules. A library whose layout changed
// is an error here, which the tests catch on an upgrade.
func (g *schemaGraph) readResolution(rs *jsonschema.Resolved, byAddr map[uintptr]*jsonschema.Schema, anchors map[string][]*jsonschema.Schema) error {
	layout := errors.New("cannot read the resolved references of github.com/google/jsonschema-go: its internals changed; see internal/contracts/schemacost.go")
	infos := reflect.ValueOf(rs).Elem().FieldByName("resolvedInfos")
	if infos.Kind() != reflect.Map {
		return layout
	}
	schemaPtr := reflect.TypeFor[*jsonschema.Schema]()
	for it := infos.MapRange(); it.Next(); {
		s := byAddr[it.Key().Pointer()]
		if s == nil {
			continue // a schema outside this one's tree: none without a loader
		}
		info := it.Value()
		if info.Kind() != reflect.Pointer || info.Elem().Kind() != reflect.Struct {
			return layout
		}
		info = info.Elem()
		path := info.FieldByName("path")
		ref := info.FieldByName("resolvedRef")
		dref := info.FieldByName("resolvedDynamicRef")
		danchor := info.FieldByName("dynamicRefAnchor")
		if path.Kind() != reflect.String || ref.Type() != schemaPtr || dref.Type() != schemaPtr || danchor.Kind() != reflect.String {
			return layout
		}
		g.label[s] = len(path.String())
		if s.ID != "" {
			g.label[s] = len(s.ID)
		}
		if s.Ref != "" {
			t := byAddr[ref.Pointer()]
			if t == nil {
				return layout
			}
			g.ref[s] = t
		}
		if s.DynamicRef != "" {
			if t := byAddr[dref.Pointer()]; t != nil {
				g.dynamic[s] = []*jsonschema.Schema{t}
			} else {
				// Resolved at validation time: any schema with that
				// dynamic anchor may be the one.
				g.dynamic[s] = anchors[danchor.String()]
			}
		}
	}
	if len(g.label) != len(g.fixed) {
		return layout
	}
	return nil
}

// inPlaceLoop returns a schema from which the keywords that apply to the
// same value ($ref, $dynamicRef, allOf, anyOf, oneOf, not, if, then, else,
// dependentSchemas) lead back to it, or nil.
func (g *schemaGraph) inPlaceLoop(root *jsonschema.Schema) *jsonschema.Schema {
	const (
		unseen = iota
		open
		done
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema) *jsonschema.Schema
	visit = func(s *jsonschema.Schema) *jsonschema.Schema {
		switch state[s] {
		case open:
			return s
		case done:
			return nil
		}
		state[s] = open
		for _, t := range g.inPlace(s) {
			if l := visit(t); l != nil {
				return l
			}
		}
		state[s] = done
		return nil
	}
	var loop *jsonschema.Schema
	eachSchema(root, func(s *jsonschema.Schema) {
		if loop == nil {
			loop = visit(s)
		}
	})
	return loop
}

// inPlace are the schemas that may apply to the same value as s.
func (g *schemaGraph) inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	if t := g.ref[s]; t != nil {
		out = append(out, t)
	}
	out = append(out, g.dynamic[s]...)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, t := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if t != nil {
			out = append(out, t)
		}
	}
	for _, k := range sortedKeys(s.DependentSchemas) {
		out = append(out, s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.DependencySchemas) {
		out = append(out, s.DependencySchemas[k])
	}
	return out
}

func (g *schemaGraph) name(s *jsonschema.Schema) string {
	if s.ID != "" {
		return s.ID
	}
	return s.String()
}

// eachSchema calls f on s and every schema under it, parents first, in a
// fixed order: every exported field of type *Schema, []*Schema or
// map[string]*Schema, as the library walks them.
func eachSchema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch c := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			eachSchema(c, f)
		case []*jsonschema.Schema:
			for _, e := range c {
				eachSchema(e, f)
			}
		case map[string]*jsonschema.Schema:
			for _, k := range sortedKeys(c) {
				eachSchema(c[k], f)
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fixedText bounds the bytes of the messages of s's own keywords that do
// not depend on the value: enum and const values, required names, a
// pattern, the names of oneOf and not branches, a number as a fraction.
func fixedText(s *jsonschema.Schema) float64 {
	n := 200.0
	for _, e := range s.Enum {
		n += fmtSize(e, nil) + 1
	}
	if s.Const != nil {
		n += fmtSize(*s.Const, nil)
	}
	if s.MultipleOf != nil || s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil {
		n += 2400 // a float64 as a big.Rat: up to about 1,100 digits, twice
	}
	n += quoted(s.Pattern)
	for _, r := range s.Required {
		n += quoted(r) + 1
	}
	for k, rs := range s.DependentRequired {
		n += quoted(k)
		for _, r := range rs {
			n += quoted(r) + 1
		}
	}
	for k, rs := range s.DependencyStrings {
		n += quoted(k)
		for _, r := range rs {
			n += quoted(r) + 1
		}
	}
	for _, b := range s.OneOf {
		n += float64(len(b.String())) + 1
	}
	if s.Not != nil {
		n += float64(len(s.Not.String()))
	}
	if s.Contains != nil {
		n += float64(len(s.Contains.String()))
	}
	return n
}

// quoted bounds the length of s written with %q: at most 4 bytes per byte
// ("\x00"), and the quotes.
func quoted(s string) float64 { return 4*float64(len(s)) + 2 }

// fmtSize bounds the length of a JSON value written with %v, as the
// validator writes values into its errors. sizes memoizes objects and
// arrays; nil computes afresh.
func fmtSize(v any, sizes map[uintptr]float64) float64 {
	switch v := v.(type) {
	case string:
		return float64(len(v))
	case float64:
		return 24 // "-2.2250738585072014e-308"
	case bool, nil:
		return 5 // "false", "<nil>"
	case map[string]any:
		p := reflect.ValueOf(v).Pointer()
		if n, ok := sizes[p]; ok {
			return n
		}
		n := 5.0 // "map[]"
		for k, e := range v {
			n += float64(len(k)) + 2 + fmtSize(e, sizes)
		}
		if sizes != nil {
			sizes[p] = n
		}
		return n
	case []any:
		if len(v) == 0 {
			return 2
		}
		p := reflect.ValueOf(v).Pointer()
		if n, ok := sizes[p]; ok {
			return n
		}
		n := 2.0
		for _, e := range v {
			n += 1 + fmtSize(e, sizes)
		}
		if sizes != nil {
			sizes[p] = n
		}
		return n
	}
	return 64 // not a value json.Unmarshal makes into an any
}

// cost is an upper bound on what validating one value against one schema
// costs the validator.
type cost struct {
	steps float64 // calls of validate, this one included
	err   float64 // bytes of the error it returns, if it fails
	pass  float64 // bytes of error text built on the way if it passes: failed branches of anyOf, oneOf, not, if, contains
	fail  float64 // the same if it fails, its own error included
}

func (c cost) text() float64 { return math.Max(c.pass, c.fail) }

// most is a bound on either of two costs, for a choice the validator makes
// at run time (then or else; which schema a $dynamicRef names).
func most(a, b cost) cost {
	return cost{math.Max(a.steps, b.steps), math.Max(a.err, b.err), math.Max(a.pass, b.pass), math.Max(a.fail, b.fail)}
}

type costKey struct {
	s    *jsonschema.Schema
	addr uintptr // an object's or a non-empty array's; 0 for other values
	n    int     // an array's length; a string's
	kind byte
}

// estimate walks a document with a schema, memoized on (schema, value):
// scalars of a kind and length cost the same, so they share a key.
type estimate struct {
	g     *schemaGraph
	memo  map[costKey]cost
	sizes map[uintptr]float64
	over  bool // more pairs than maxCostPairs: the bound is infinite
}

// schemaCost bounds the steps and the error text of validating doc (a value
// json.Unmarshal made) against the root of g.
func schemaCost(g *schemaGraph, root *jsonschema.Schema, doc any) cost {
	e := &estimate{g: g, memo: map[costKey]cost{}, sizes: map[uintptr]float64{}}
	c := e.of(root, doc)
	if e.over {
		return cost{steps: math.Inf(1), err: math.Inf(1), pass: math.Inf(1), fail: math.Inf(1)}
	}
	return c
}

func keyOf(s *jsonschema.Schema, v any) costKey {
	switch v := v.(type) {
	case map[string]any:
		return costKey{s: s, addr: reflect.ValueOf(v).Pointer(), kind: 'o'}
	case []any:
		if len(v) == 0 {
			return costKey{s: s, kind: 'a'}
		}
		return costKey{s: s, addr: reflect.ValueOf(v).Pointer(), n: len(v), kind: 'a'}
	case string:
		return costKey{s: s, n: len(v), kind: 's'}
	case float64:
		return costKey{s: s, kind: 'n'}
	case bool:
		return costKey{s: s, kind: 'b'}
	}
	return costKey{s: s, kind: 'z'}
}

func (e *estimate) of(s *jsonschema.Schema, v any) cost {
	k := keyOf(s, v)
	if c, ok := e.memo[k]; ok {
		return c
	}
	if e.over || len(e.memo) >= maxCostPairs {
		e.over = true
		return cost{}
	}
	g := e.g
	a := calls{local: g.fixed[s]}
	if t := g.ref[s]; t != nil {
		a.chain(e.of(t, v))
	}
	if ts := g.dynamic[s]; len(ts) > 0 {
		c := e.of(ts[0], v)
		for _, t := range ts[1:] {
			c = most(c, e.of(t, v))
		}
		a.chain(c)
	}
	for _, t := range s.AllOf {
		a.chain(e.of(t, v))
	}
	if len(s.AnyOf) > 0 {
		joined := 64.0 // "anyOf: did not validate against any of [...]:\n"
		for _, t := range s.AnyOf {
			c := e.of(t, v)
			a.drop(c)
			joined += float64(len(t.String())) + 2 + c.err
		}
		a.local = math.Max(a.local, joined)
	}
	for _, t := range s.OneOf {
		a.drop(e.of(t, v))
	}
	if s.Not != nil {
		a.drop(e.of(s.Not, v))
	}
	if s.If != nil {
		a.drop(e.of(s.If, v))
		switch {
		case s.Then != nil && s.Else != nil:
			a.chain(most(e.of(s.Then, v), e.of(s.Else, v)))
		case s.Then != nil:
			a.chain(e.of(s.Then, v))
		case s.Else != nil:
			a.chain(e.of(s.Else, v))
		}
	}
	own := g.fixed[s] // the longest message of s's own keywords
	prints := s.Type != "" || s.Types != nil || s.Enum != nil || s.Const != nil
	switch v := v.(type) {
	case string:
		if s.MinLength != nil || s.MaxLength != nil || s.Pattern != "" {
			own += quoted(v)
		}
	case []any:
		prints = prints || s.Contains != nil
		for i, item := range v {
			if i < len(s.PrefixItems) {
				a.chain(e.of(s.PrefixItems[i], item))
			}
			if i < len(s.ItemsArray) {
				a.chain(e.of(s.ItemsArray[i], item))
			} else if s.ItemsArray != nil && s.AdditionalItems != nil {
				a.chain(e.of(s.AdditionalItems, item))
			}
			if s.Items != nil && i >= len(s.PrefixItems) {
				a.chain(e.of(s.Items, item))
			}
			if s.Contains != nil {
				a.drop(e.of(s.Contains, item))
			}
			if s.UnevaluatedItems != nil {
				a.chain(e.of(s.UnevaluatedItems, item))
			}
		}
	case map[string]any:
		for name, item := range v {
			matched := false
			if t, ok := s.Properties[name]; ok {
				a.chain(e.of(t, item))
				matched = true
			}
			for _, p := range g.patterns[s] {
				if p.re.MatchString(name) {
					a.chain(e.of(p.schema, item))
					matched = true
				}
			}
			if s.AdditionalProperties != nil {
				own += quoted(name) + 1 // "unexpected additional properties [...]"
				if !matched {
					a.chain(e.of(s.AdditionalProperties, item))
				}
			}
			if s.PropertyNames != nil {
				a.chain(e.of(s.PropertyNames, name))
			}
			if s.UnevaluatedProperties != nil {
				a.chain(e.of(s.UnevaluatedProperties, item))
			}
			if t, ok := s.DependentSchemas[name]; ok {
				a.chain(e.of(t, v))
			}
			if t, ok := s.DependencySchemas[name]; ok {
				a.chain(e.of(t, v))
			}
		}
	}
	if prints {
		own += fmtSize(v, e.sizes)
	}
	a.local = math.Max(a.local, own)
	c := a.cost(float64(len("validating : ")) + float64(g.label[s]))
	e.memo[k] = c
	return c
}

// calls adds up the validate calls that one call makes.
type calls struct {
	steps     float64
	local     float64 // the longest error of its own: a keyword's, or anyOf's joined errors
	chainPass float64 // text built by the chained calls that pass
	worstFail float64 // the most a chained call's failure adds to that
	dropped   float64 // text built by calls whose errors are dropped or joined
}

// chain adds a call whose failure fails this one with its error: $ref,
// allOf, then/else, items, properties, ...; one of them fails at most, the
// validator stopping there.
func (a *calls) chain(c cost) {
	a.steps += c.steps
	a.local = math.Max(a.local, c.err)
	a.chainPass += c.pass
	a.worstFail = math.Max(a.worstFail, c.fail-c.pass)
}

// drop adds a call run for its verdict: a branch of anyOf or oneOf, not,
// if, contains. Its error text is built whether or not it counts.
func (a *calls) drop(c cost) {
	a.steps += c.steps
	a.dropped += c.text()
}

// cost is the cost of the call, prefix the length of its wrapping of an
// error ("validating NAME: ").
func (a *calls) cost(prefix float64) cost {
	c := cost{steps: 1 + a.steps, err: prefix + a.local}
	c.pass = a.chainPass + a.dropped
	// A failure formats its message, then wraps it: twice its length.
	c.fail = 2*c.err + a.chainPass + a.worstFail + a.dropped
	return c
}
