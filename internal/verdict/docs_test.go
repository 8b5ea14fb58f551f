package verdict

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// documentedStates reads the states a document lists in its paragraph that
// defines a server's **state**: each `word` of it outside parentheses (which
// say what a state means, and may name a key or another state), in order.
func documentedStates(t *testing.T, file string) []State {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "**state**")
	if i < 0 {
		t.Fatalf("%s has no paragraph defining a server's **state**", file)
	}
	para, _, _ := strings.Cut(text[i:], "\n\n")
	for paren := regexp.MustCompile(`\([^()]*\)`); paren.MatchString(para); {
		para = paren.ReplaceAllString(para, "")
	}
	var out []State
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(para, -1) {
		if s := State(m[1]); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestDocumentedStates: the README and docs/deployment.md list every state
// the verdict knows, in its order of severity (the status page's order, and
// what the alerts and the API's "state" say), and no state it does not
// know. A state added here without its words there fails.
func TestDocumentedStates(t *testing.T) {
	want := states()
	for _, file := range []string{"../../README.md", "../../docs/deployment.md"} {
		got := documentedStates(t, file)
		for _, s := range want {
			if !slices.Contains(got, s) {
				t.Errorf("%s does not list the state %s", file, s)
			}
		}
		for _, s := range got {
			if s.Rank() == len(stateRules) {
				t.Errorf("%s lists a state %s, which the verdict does not know", file, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s lists the states %v; the verdict knows, from worst to best, %v", file, got, want)
		}
	}
}
