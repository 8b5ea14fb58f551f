package issuer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// documentedAnswers is testdata/answers/ID.json: a service's documented
// answers, which the issuer stand-ins serve.
type documentedAnswers struct {
	Source      string                       `json:"source"`
	Credentials map[string]map[string]string `json:"credentials"`
	Accepted    *documentedAnswer            `json:"accepted"`
	Rejected    *documentedAnswer            `json:"rejected"`
	Expiring    *documentedAnswer            `json:"expiring"`
	Revoked     *documentedAnswer            `json:"revoked"`
}

type documentedAnswer struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

func readAnswers(t *testing.T, id string) documentedAnswers {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "answers", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a documentedAnswers
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answers/%s.json: %v", id, err)
	}
	return a
}

// Every service has its documented answers, and they agree with the
// service's file: the credentials match its formats, the accepted answer
// is read as accepted and the rejected one as rejected by its answers'
// rules, and an expiring answer tells the expiry where the file reads it.
func TestDocumentedAnswersAgree(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "answers", "*.json"))
	if len(files) != len(Catalogue()) {
		t.Errorf("%d answers files for %d services", len(files), len(Catalogue()))
	}
	for _, s := range Catalogue() {
		t.Run(s.ID, func(t *testing.T) {
			a := readAnswers(t, s.ID)
			if !strings.HasPrefix(a.Source, "https://") {
				t.Errorf("source %q is not an https page", a.Source)
			}
			for _, c := range s.Credentials {
				v := a.Credentials[c.Role]
				if v["good"] == "" {
					t.Errorf("credential %s: no good value", c.Role)
				}
				for _, kind := range []string{"good", "fake"} {
					if v[kind] != "" && len(c.Formats) > 0 && !matchesWhole(c.Formats, v[kind]) {
						t.Errorf("credential %s: the %s value %q matches none of the formats", c.Role, kind, v[kind])
					}
				}
			}
			if p := a.Credentials[s.Credentials[0].Role]; p["fake"] == "" || p["fake"] == p["good"] {
				t.Errorf("the primary credential wants a fake value other than the good one")
			}
			if len(a.Credentials) != len(s.Credentials) {
				t.Errorf("answers name %d credentials, the service %d", len(a.Credentials), len(s.Credentials))
			}
			for name, want := range map[string]struct {
				ans     *documentedAnswer
				verdict Verdict
			}{
				"accepted": {a.Accepted, Accepted},
				"rejected": {a.Rejected, Rejected},
				"expiring": {a.Expiring, Accepted},
				"revoked":  {a.Revoked, Rejected},
			} {
				if want.ans == nil {
					if name == "accepted" || name == "rejected" {
						t.Errorf("no %s answer", name)
					}
					continue
				}
				if got := judgeForTest(s, want.ans); got != want.verdict {
					t.Errorf("%s answer (%d %s) is read as %q", name, want.ans.Status, want.ans.Body, got)
				}
			}
			if (a.Expiring != nil) != (s.Expiry != nil) {
				t.Errorf("an expiring answer is given for a service that tells expiry, and only then")
			}
			if a.Expiring != nil {
				told := a.Expiring.Headers[s.Expiry.Header]
				if s.Expiry.JSON != "" {
					told = fmt.Sprint(lookupForTest(a.Expiring.Body, s.Expiry.JSON))
				}
				if !strings.Contains(told, "{expiry}") {
					t.Errorf("the expiring answer tells no {expiry} at %+v", *s.Expiry)
				}
			}
			for _, m := range s.Message {
				if strings.TrimSpace(m) == "" {
					t.Errorf("an empty message path")
				}
			}
			if a.Rejected != nil && len(s.Message) > 0 && !json.Valid(a.Rejected.Body) {
				return
			}
			if a.Rejected != nil && len(s.Message) > 0 {
				found := false
				for _, m := range s.Message {
					if v, ok := lookupForTest(a.Rejected.Body, m).(string); ok && v != "" {
						found = true
					}
				}
				if !found {
					t.Errorf("the rejected answer has no words at %v", s.Message)
				}
			}
		})
	}
}

// No name ties a credential to two services: a name says which service a
// credential of its format is for.
func TestNamesTieOneService(t *testing.T) {
	owner := map[string]string{}
	for _, s := range Catalogue() {
		for _, c := range s.Credentials[:1] {
			for _, n := range c.Names {
				key := strings.ToLower(strings.NewReplacer("-", "_").Replace(strings.TrimLeft(n, "-")))
				if o, ok := owner[key]; ok && o != s.ID {
					t.Errorf("name %s ties both %s and %s", n, o, s.ID)
				}
				owner[key] = s.ID
			}
		}
	}
}

func matchesWhole(formats []string, v string) bool {
	return slices.ContainsFunc(formats, func(f string) bool {
		return mustCompileWhole(f).MatchString(v)
	})
}

// judgeForTest reads an answer by the service's rules, the first that
// matches deciding.
func judgeForTest(s *Service, a *documentedAnswer) Verdict {
	for _, r := range s.Answers {
		if !slices.Contains(r.Status, a.Status) {
			continue
		}
		ok := true
		for p, want := range r.Equal {
			if !equalForTest(lookupForTest(a.Body, p), want) {
				ok = false
			}
		}
		for p, wants := range r.OneOf {
			got := lookupForTest(a.Body, p)
			if !slices.ContainsFunc(wants, func(w any) bool { return equalForTest(got, w) }) {
				ok = false
			}
		}
		if ok {
			return r.Verdict
		}
	}
	return Unknown
}

func equalForTest(got, want any) bool {
	if want == nil {
		return got == nil
	}
	return reflect.DeepEqual(got, want)
}

// lookupForTest follows a dotted JSON path ("errors.0.message").
func lookupForTest(body json.RawMessage, path string) any {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func mustCompileWhole(f string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + f + `)$`) }
