package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
)

// fleetYAML is a configuration of n HTTP servers, as a generated fleet's.
func fleetYAML(n int, extra string) []byte {
	var b strings.Builder
	b.WriteString("defaults:\n  schedule: \"@every 5m\"\nservers:\n")
	for i := range n {
		fmt.Fprintf(&b, "  s%06d: {url: \"http://127.0.0.1:9/s/%d/mcp\", transport: http}\n", i, i)
	}
	b.WriteString(extra)
	return []byte(b.String())
}

// yamlParser answers what koanf's YAML parser answers, value and error,
// for every configuration in testdata and for the shapes that take
// yaml.v3's own path (anchors, merge keys, keys that are not strings) or
// that it must refuse (duplicates, not a mapping).
func TestYAMLParserAsKoanfs(t *testing.T) {
	docs := map[string][]byte{
		"empty":            nil,
		"comment only":     []byte("# nothing\n"),
		"top-level list":   []byte("- a\n- b\n"),
		"scalar":           []byte("servers\n"),
		"syntax":           []byte("servers:\n  a: [1, 2\n"),
		"null values":      []byte("servers:\nlock:\ndefaults: {}\n"),
		"anchor and alias": []byte("defaults: &d {timeout: 5s}\nservers:\n  a: {url: \"http://x\", opts: *d}\n  b: *d\n"),
		"merge key":        []byte("base: &b {timeout: 5s, era: auto}\nservers:\n  a:\n    <<: *b\n    url: \"http://x\"\n    timeout: 9s\n"),
		"merge at top":     []byte("base: &b {lock: x.json}\n<<: *b\nservers: {a: {url: \"http://x\"}}\n"),
		"non-string keys":  []byte("servers:\n  1: {url: \"http://x\"}\n  true: {url: \"http://y\"}\n  ~: {}\n"),
		"quoted numbers":   []byte("servers:\n  \"1\": {url: \"http://x\"}\n  \"2\": {url: \"http://y\"}\n"),
		"duplicate top":    []byte("lock: a.json\nservers: {}\nlock: b.json\n"),
		"duplicate server": []byte("servers:\n  a: {url: \"http://x\"}\n  b: {url: \"http://y\"}\n  a: {url: \"http://z\"}\n"),
		"duplicate nested": []byte("servers:\n  a:\n    env: {X: \"1\", X: \"2\"}\n"),
		"types":            []byte("servers:\n  a: {n: 12, f: 1.5, b: yes, t: 2026-01-02, s: '007', h: 0x1F, list: [1, two, {k: v}]}\n"),
		"many servers":     fleetYAML(3000, ""),
		// An alias bomb: no one value expands much, all of them together
		// do; yaml.v3 decoding the document at once refuses it.
		"alias bomb, wide":         aliasBomb(1000, 900),
		"alias bomb, nested":       []byte("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"),
		"aliases, within the rule": aliasBomb(100, 900),
		"many, one twice":          fleetYAML(3000, "  s001234: {url: \"http://127.0.0.1:9/again\"}\n"),
	}
	files, err := filepath.Glob("testdata/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := filepath.Glob("testdata/bad/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files)+len(bad) < 10 {
		t.Fatalf("only %d configurations in testdata", len(files)+len(bad))
	}
	for _, f := range append(files, bad...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = b
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, wantErr := yaml.Parser().Unmarshal(doc)
			got, gotErr := yamlParser{}.Unmarshal(doc)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, koanf's %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %#v\nkoanf's %#v", got, want)
			}
			if wantErr != nil {
				return
			}
			// The whole loading, as koanf's Load gives it.
			k := koanf.New(".")
			if err := k.Load(rawbytes.Provider(doc), yaml.Parser()); err != nil {
				t.Fatalf("koanf's Load: %v", err)
			}
			if m, err := parseYAML(doc); err != nil || !reflect.DeepEqual(m, k.Raw()) {
				t.Errorf("parseYAML = %#v, %v\nkoanf's Load %#v", m, err, k.Raw())
			}
		})
	}
}

// aliasBomb is a configuration of n servers whose arguments are an alias
// of one list of width strings: one value expands to width strings, the
// whole document to n*width.
func aliasBomb(n, width int) []byte {
	var b strings.Builder
	b.WriteString("servers:\n  s0: {command: echo, args: &a [")
	for i := range width {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("lol")
	}
	b.WriteString("]}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  s%d: {command: echo, args: *a}\n", i)
	}
	return []byte(b.String())
}

// A configuration of aliases that would expand to millions of values is
// refused as yaml.v3 refuses it, before anything is decoded: in bounded
// memory, however the expansion is spread over the document's values. Each
// value decoded apart, yaml.v3's guard saw a few hundred values at a time
// and let 650 kB of aliases take gigabytes (here 2,000 servers, 1.8
// million arguments: a hundred megabytes).
func TestYAMLAliasBombBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpwatch.yml")
	bomb := aliasBomb(2000, 900)
	if err := os.WriteFile(path, bomb, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Load(path)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d kB of aliases: %v; %d kB allocated", len(bomb)>>10, err, allocated>>10)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("Load = %v, want the file refused for excessive aliasing", err)
	}
	// The document's nodes as written, and no expansion: a few MB. Each
	// value decoded, the expansion alone is over 100 MB.
	if limit := uint64(16 << 20); allocated > limit {
		t.Errorf("%d MB allocated to refuse %d kB, want at most %d MB", allocated>>20, len(bomb)>>10, limit>>20)
	}
}

// BenchmarkYAMLParse parses the configuration of a fleet: koanf's parser
// (yaml.v3 whole) at 10,000 servers, mcpwatch's at 10,000 and 100,000, and
// a file's whole loading (parseYAML) at 10,000. At 100,000 koanf's takes minutes: its duplicate-key check
// compares every pair of keys.
func BenchmarkYAMLParse(b *testing.B) {
	for _, bm := range []struct {
		name   string
		n      int
		parser interface {
			Unmarshal([]byte) (map[string]any, error)
		}
	}{
		{"koanf/10000", 10000, yaml.Parser()},
		{"mcpwatch/10000", 10000, yamlParser{}},
		{"mcpwatch/100000", 100000, yamlParser{}},
		// The whole of a file's loading: the parse and nothing after it
		// but the keys made strings (koanf's Load around it took 2.6x).
		{"parseYAML/10000", 10000, loadingFunc(parseYAML)},
	} {
		doc := fleetYAML(bm.n, "")
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				m, err := bm.parser.Unmarshal(doc)
				if err != nil || len(m["servers"].(map[string]any)) != bm.n {
					b.Fatalf("%v, %d servers", err, len(m["servers"].(map[string]any)))
				}
			}
		})
	}
}

// loadingFunc benchmarks a function that loads a file's bytes like a parser.
type loadingFunc func([]byte) (map[string]any, error)

func (f loadingFunc) Unmarshal(b []byte) (map[string]any, error) { return f(b) }
