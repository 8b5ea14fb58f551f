package expand

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

var mapLookup = testtool.Lookup

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "token"), "s3cret-token\n")
	writeFile(t, filepath.Join(dir, "crlf"), "crlf-token\r\n")
	writeFile(t, filepath.Join(dir, "two-newlines"), "tok\n\n")
	writeFile(t, filepath.Join(dir, "empty"), "")
	writeFile(t, filepath.Join(dir, "home", ".secret"), "from-home")
	env := map[string]string{
		"TOKEN":                  "abc",
		"EMPTY":                  "",
		"DIR":                    dir,
		"HOME":                   filepath.Join(dir, "home"),
		"B":                      "bee",
		"MCPWATCH_INPUT_API_KEY": "input-value",
	}
	cases := []struct {
		name, in, want string
	}{
		{"no reference", "plain value", "plain value"},
		{"whole value", "${TOKEN}", "abc"},
		{"embedded", "Bearer ${TOKEN}", "Bearer abc"},
		{"twice", "${TOKEN}:${TOKEN}", "abc:abc"},
		{"set but empty", "x${EMPTY}y", "xy"},
		{"default when unset", "${NOPE:-fallback}", "fallback"},
		{"default when empty", "${EMPTY:-fallback}", "fallback"},
		{"default ignored when set", "${TOKEN:-fallback}", "abc"},
		{"empty default", "${NOPE:-}", ""},
		{"default with colon and spaces", "${NOPE:-a: b c}", "a: b c"},
		{"nested default", "${NOPE:-${B}}", "bee"},
		{"env prefix", "${env:TOKEN}", "abc"},
		{"env prefix default", "${env:NOPE:-d}", "d"},
		{"file", "${file:" + filepath.Join(dir, "token") + "}", "s3cret-token"},
		{"file crlf", "${file:" + filepath.Join(dir, "crlf") + "}", "crlf-token"},
		{"file trims one newline only", "${file:" + filepath.Join(dir, "two-newlines") + "}", "tok\n"},
		{"empty file", "${file:" + filepath.Join(dir, "empty") + "}", ""},
		{"file path from variable", "${file:${DIR}/token}", "s3cret-token"},
		{"file in header", "Bearer ${file:${DIR}/token}", "Bearer s3cret-token"},
		{"file under home", "${file:~/.secret}", "from-home"},
		{"input from env", "${input:api-key}", "input-value"},
		{"required and set", "Bearer ${TOKEN:?set TOKEN}", "Bearer abc"},
		{"dollar dollar", "$$", "$"},
		{"escaped reference", "$${TOKEN}", "${TOKEN}"},
		{"lone dollar kept", "price $5 and a$", "price $5 and a$"},
		{"bare $VAR not expanded", "$TOKEN", "$TOKEN"},
		{"closing brace outside a reference", "a}b", "a}b"},
		{"workspaceFolder is a plain variable outside VS Code", "${workspaceFolder:-none}", "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Expand(tc.in, mapLookup(env))
			if err != nil {
				t.Fatalf("Expand(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	secretLooking := filepath.Join(dir, "notadir")
	writeFile(t, secretLooking, "contents-never-shown")
	env := map[string]string{"TOKEN": "abc", "DIR": dir, "EMPTY": ""}
	cases := []struct {
		name, in string
		kind     error
		msg      string
	}{
		{"unset", "${REPORT_API_TOKEN}", ErrUnsetVariable,
			"variable REPORT_API_TOKEN is not set: set REPORT_API_TOKEN or use ${REPORT_API_TOKEN:-} for an empty default"},
		{"unset embedded", "Bearer ${REPORT_API_TOKEN}", ErrUnsetVariable,
			"variable REPORT_API_TOKEN is not set: set REPORT_API_TOKEN or use ${REPORT_API_TOKEN:-} for an empty default"},
		{"unset inside default", "${NOPE:-${ALSO_NOPE}}", ErrUnsetVariable,
			"variable ALSO_NOPE is not set: set ALSO_NOPE or use ${ALSO_NOPE:-} for an empty default"},
		{"missing file", "${file:" + missing + "}", ErrSecretFile,
			"cannot read secret file " + missing + ": no such file or directory; create it or fix the ${file:...} path"},
		{"file below a file", "${file:" + secretLooking + "/x}", ErrSecretFile,
			"cannot read secret file " + secretLooking + "/x: not a directory; create it or fix the ${file:...} path"},
		{"file path unset variable", "${file:${NOPE}/token}", ErrUnsetVariable,
			"variable NOPE is not set: set NOPE or use ${NOPE:-} for an empty default"},
		{"input unresolved", "${input:perplexity-key}", ErrUnsetVariable,
			"input perplexity-key is not resolved (mcpwatch never prompts): set MCPWATCH_INPUT_PERPLEXITY_KEY, or add inputs: {perplexity-key: {env: VAR}} or {file: PATH} to mcpwatch.yml"},
		{"unclosed", "Bearer ${TOKEN", ErrSyntax,
			"bad reference at byte 7: missing closing } (write $$ for a literal $)"},
		{"empty name", "${}", ErrSyntax,
			"bad reference at byte 0: expected a variable name ([A-Za-z_][A-Za-z0-9_]*), file:PATH, env:VAR or input:ID after ${ (write $$ for a literal $)"},
		{"digit first", "${1A}", ErrSyntax,
			"bad reference at byte 0: expected a variable name ([A-Za-z_][A-Za-z0-9_]*), file:PATH, env:VAR or input:ID after ${ (write $$ for a literal $)"},
		{"shell-only form", "${TOKEN-x}", ErrSyntax,
			"bad reference at byte 0: unsupported form; use ${VAR}, ${VAR:-default}, ${VAR:?message}, ${env:VAR}, ${file:PATH} or ${input:ID} (write $$ for a literal $)"},
		{"unknown prefix", "${vault:x}", ErrSyntax,
			"bad reference at byte 0: unsupported form; use ${VAR}, ${VAR:-default}, ${VAR:?message}, ${env:VAR}, ${file:PATH} or ${input:ID} (write $$ for a literal $)"},
		{"empty file path", "${file:}", ErrSyntax,
			"bad reference at byte 0: ${file:} needs a path (write $$ for a literal $)"},
		{"empty input", "${input:}", ErrSyntax,
			"bad reference at byte 0: ${input:ID} needs an ID of letters, digits, '.', '_' or '-' (write $$ for a literal $)"},
		{"unclosed default", "${A:-b", ErrSyntax,
			"bad reference at byte 0: missing closing } (write $$ for a literal $)"},
		{"required, unset", "${NOPE:?create a token at https://github.com/settings/tokens}", ErrRequired,
			"variable NOPE is not set: create a token at https://github.com/settings/tokens"},
		{"required, empty", "Bearer ${EMPTY:?}", ErrRequired, "variable EMPTY is empty: it is required"},
		{"required, a reference in the message", "${A:?see ${B}}", ErrSyntax,
			"bad reference at byte 0: the message of ${VAR:?message} is plain text, without references (write $$ for a literal $)"},
		{"required, unclosed", "${A:?msg", ErrSyntax, "bad reference at byte 0: missing closing } (write $$ for a literal $)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Expand(tc.in, mapLookup(env))
			if err == nil {
				t.Fatalf("Expand(%q): no error", tc.in)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.kind)
			}
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not *Error", err)
			}
			if err.Error() != tc.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, tc.msg)
			}
			if strings.Contains(err.Error(), "contents-never-shown") || strings.Contains(err.Error(), "abc") {
				t.Errorf("message carries a value: %s", err)
			}
		})
	}
}

func TestExpandErrorFields(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "token")
	_, err := Expand("${file:"+missing+"}", mapLookup(nil))
	var ee *Error
	if !errors.As(err, &ee) {
		t.Fatalf("not an *Error: %v", err)
	}
	if ee.File != missing || ee.Var != "" {
		t.Errorf("File=%q Var=%q, want File=%q", ee.File, ee.Var, missing)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}

	_, err = Expand("${REPORT_API_TOKEN}", mapLookup(nil))
	if !errors.As(err, &ee) || ee.Var != "REPORT_API_TOKEN" || ee.File != "" {
		t.Errorf("unset: got %+v", ee)
	}
}

func TestExpandRereadsFile(t *testing.T) {
	// The daemon expands before every probe: a rotated secret must show.
	path := filepath.Join(t.TempDir(), "token")
	ref := "${file:" + path + "}"
	for _, content := range []string{"one\n", "", "two"} {
		writeFile(t, path, content)
		got, err := Expand(ref, mapLookup(nil))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(content, "\n"); got != want {
			t.Errorf("after writing %q: got %q", content, got)
		}
	}
}

func TestExpandSecretFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	writeFile(t, path, strings.Repeat("x", MaxSecretBytes+1))
	_, err := Expand("${file:"+path+"}", mapLookup(nil))
	if !errors.Is(err, ErrSecretFile) || !strings.Contains(err.Error(), "larger than the limit of 1 MiB") {
		t.Errorf("got %v", err)
	}
}

func TestInputEnvVar(t *testing.T) {
	for id, want := range map[string]string{
		"api-key":       "MCPWATCH_INPUT_API_KEY",
		"githubToken":   "MCPWATCH_INPUT_GITHUBTOKEN",
		"a.b_c":         "MCPWATCH_INPUT_A_B_C",
		"perplexity-v2": "MCPWATCH_INPUT_PERPLEXITY_V2",
	} {
		if got := inputEnvVar(id); got != want {
			t.Errorf("inputEnvVar(%q) = %q, want %q", id, got, want)
		}
	}
}

var writeFile = testtool.WriteFile
