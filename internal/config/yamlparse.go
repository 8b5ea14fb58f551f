package config

import (
	"errors"

	yamlv3 "go.yaml.in/yaml/v3"
)

// yamlParser is koanf's YAML parser without its quadratic cost: yaml.v3
// checks a mapping's keys for duplicates by comparing every key with every
// later one, which for the servers: of a 100,000-server file is 5 billion
// comparisons, minutes of CPU before the daemon serves or probes anything
// (10,000 servers: 50 million, a fraction of a second). It reads the
// document as nodes (linear), then decodes each mapping whose keys are
// plain strings pair by pair, finding duplicates with a set, and hands
// everything else (scalars, sequences, aliases, a mapping with a merge
// key or a key that is not a string) to yaml.v3 as it is. The result and
// the errors are yaml.v3's: a duplicate key is decoded by yaml.v3 from the
// two pairs, so its message is the library's own. Decoding value by value
// would reset yaml.v3's guard against alias bombs at each value (a few
// hundred aliases a value, tens of thousands of values: gigabytes), so the
// guard is applied to the document as a whole first (checkAliasing).
type yamlParser struct{}

// Unmarshal parses a document as koanf's YAML parser does.
func (yamlParser) Unmarshal(b []byte) (map[string]any, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if err := checkAliasing(&doc); err != nil {
		return nil, err
	}
	if doc.Kind != yamlv3.DocumentNode || len(doc.Content) != 1 || !stringKeyed(doc.Content[0]) {
		// Empty, not a mapping, or a mapping yaml.v3 must read whole:
		// its answer, and its error, as koanf's parser gives them.
		var out map[string]any
		if err := yamlv3.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return decodeMapping(doc.Content[0])
}

// Marshal writes the map as koanf's YAML parser does.
func (yamlParser) Marshal(m map[string]any) ([]byte, error) { return yamlv3.Marshal(m) }

// stringKeyed reports whether n is a mapping that decodes to a
// map[string]any pair by pair: every key a plain string, none a merge key
// (<<, whose pairs yaml.v3 merges under the mapping's own).
func stringKeyed(n *yamlv3.Node) bool {
	if n.Kind != yamlv3.MappingNode || len(n.Content)%2 != 0 {
		return false
	}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yamlv3.ScalarNode || k.ShortTag() != "!!str" || k.Value == "<<" {
			return false
		}
	}
	return true
}

func decodeMapping(n *yamlv3.Node) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	at := make(map[string]int, len(n.Content)/2) // key -> index of its pair
	for i := 0; i < len(n.Content); i += 2 {
		key := n.Content[i]
		if j, dup := at[key.Value]; dup {
			// yaml.v3 words it, from the two pairs alone.
			pair := *n
			pair.Content = []*yamlv3.Node{n.Content[j], n.Content[j+1], key, n.Content[i+1]}
			var v map[string]any
			return nil, pair.Decode(&v)
		}
		at[key.Value] = i
		v, err := decodeValue(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[key.Value] = v
	}
	return out, nil
}

func decodeValue(n *yamlv3.Node) (any, error) {
	if stringKeyed(n) {
		return decodeMapping(n)
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// errExcessiveAliasing is yaml.v3's refusal of an alias bomb, in its words.
var errExcessiveAliasing = errors.New("yaml: document contains excessive aliasing")

// checkAliasing refuses a document whose aliases would expand beyond what
// yaml.v3 allows when it decodes a document at once: it counts, in
// decoding order, the values a decoding of the whole document makes (each
// key and value, an alias's target once for each alias that names it) and
// those of them made through an alias, and applies yaml.v3's rule to the
// counts (allowedAliasRatio), without decoding anything. It costs one walk
// of the nodes as written, each anchor's size counted once; a 650 kB
// bomb that would expand to tens of millions of values is refused in a
// few milliseconds and a few megabytes.
func checkAliasing(doc *yamlv3.Node) error {
	c := aliasCount{sizes: map[*yamlv3.Node]int{}}
	return c.walk(doc)
}

// aliasCount is yaml.v3's decoder's count of a document: decoded, every
// value made; aliased, those made through an alias.
type aliasCount struct {
	decoded, aliased int
	sizes            map[*yamlv3.Node]int // values decoding a node makes; -1 while counted
}

// walk counts n as decoding meets it, and fails where yaml.v3 would: at the
// end of an alias's expansion, where the share of aliased values is at its
// highest and the share allowed at its lowest.
func (c *aliasCount) walk(n *yamlv3.Node) error {
	c.decoded++
	if n.Kind == yamlv3.AliasNode {
		e := c.size(n.Alias)
		c.decoded, c.aliased = saturate(c.decoded+e), saturate(c.aliased+e)
		if c.aliased > 100 && c.decoded > 1000 && float64(c.aliased)/float64(c.decoded) > allowedAliasRatio(c.decoded) {
			return errExcessiveAliasing
		}
		return nil
	}
	for _, child := range n.Content {
		if err := c.walk(child); err != nil {
			return err
		}
	}
	return nil
}

// size is how many values decoding n makes, aliases followed; an alias of
// a node that holds it (which yaml.v3 refuses as it decodes) adds nothing.
func (c *aliasCount) size(n *yamlv3.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := c.sizes[n]; ok {
		return max(s, 0)
	}
	c.sizes[n] = -1
	s := 1
	if n.Kind == yamlv3.AliasNode {
		s = saturate(s + c.size(n.Alias))
	}
	for _, child := range n.Content {
		s = saturate(s + c.size(child))
	}
	c.sizes[n] = s
	return s
}

// maxCount caps a count: an alias bomb's expansion overflows an int.
const maxCount = 1 << 50

func saturate(n int) int { return min(n, maxCount) }

// allowedAliasRatio is yaml.v3's (decode.go): the share of a document's
// values that may come from aliases, 99% up to 400,000 values, falling to
// 10% at 4,000,000 and beyond, so that aliases add at most about 400,000
// values to all but a huge document.
func allowedAliasRatio(decoded int) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case decoded <= low:
		return 0.99
	case decoded >= high:
		return 0.10
	}
	return 0.99 - 0.89*float64(decoded-low)/float64(high-low)
}
