package config

import (
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
// two pairs, so its message is the library's own.
type yamlParser struct{}

// Unmarshal parses a document as koanf's YAML parser does.
func (yamlParser) Unmarshal(b []byte) (map[string]any, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(b, &doc); err != nil {
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
