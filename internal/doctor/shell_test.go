package doctor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeEnv resolves variables from a map; expressions env.NAME from it too.
type fakeEnv map[string]string

func (e fakeEnv) variable(name string) (string, bool) { v, ok := e[name]; return v, ok }
func (e fakeEnv) expression(expr string) (string, bool) {
	if name, ok := strings.CutPrefix(expr, "env."); ok {
		return e.variable(name)
	}
	return "", false
}

// describe writes each command as "line:op [words]" with its flags.
func describe(cmds []command) []string {
	var out []string
	for _, c := range cmds {
		var words []string
		for _, a := range c.assigns {
			words = append(words, a.name+"="+a.value.raw())
		}
		for _, w := range c.words {
			words = append(words, w.raw())
		}
		s := fmt.Sprintf("%d:%q %q", c.line, c.op, words)
		if c.prev != "" {
			s = c.prev + " " + s
		}
		if c.negated {
			s += " negated"
		}
		if c.condition {
			s += " condition"
		}
		out = append(out, s)
	}
	return out
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"words and quotes", `mcpwatch check --receipt "a b.json" -c 'x y' plain\ space`,
			[]string{`0:"" ["mcpwatch" "check" "--receipt" "a b.json" "-c" "x y" "plain space"]`}},
		{"continuations", "mcpwatch check \\\n  --strict \\\n  --format github\necho done",
			[]string{`0:"\n" ["mcpwatch" "check" "--strict" "--format" "github"]`, `3:"" ["echo" "done"]`}},
		{"and-or lists and pipes", "a && b || c | d; e &",
			[]string{`0:"&&" ["a"]`, `&& 0:"||" ["b"]`, `|| 0:"|" ["c"]`, `| 0:";" ["d"]`, `0:"&" ["e"]`}},
		{"comments", "# mcpwatch check --strict\necho hi # mcpwatch check",
			[]string{`1:"" ["echo" "hi"]`}},
		{"conditions and negation", "if mcpwatch check; then echo ok; fi\n! mcpwatch check\nwhile false; do :; done",
			[]string{`0:";" ["mcpwatch" "check"] condition`, `0:";" ["echo" "ok"]`, `1:"\n" ["mcpwatch" "check"] negated`,
				`2:";" ["false"] condition`, `2:";" [":"]`}},
		{"assignments and redirections", "X=1 Y=\"a b\" mcpwatch check 2>&1 >> \"$GITHUB_STEP_SUMMARY\"",
			[]string{`0:"" ["X=1" "Y=a b" "mcpwatch" "check"]`}},
		{"here documents are skipped", "cat <<EOF > x\nmcpwatch check\nEOF\ncat <<-'END'\n\tmcpwatch check\n\tEND\nmcpwatch version",
			[]string{`0:"\n" ["cat"]`, `3:"\n" ["cat"]`, `6:"" ["mcpwatch" "version"]`}},
		{"expansions", "mcpwatch check --receipt ${{ env.R }} -c $CFG --x=${OTHER} $(date) `id` $1",
			[]string{`0:"" ["mcpwatch" "check" "--receipt" "${{ env.R }}" "-c" "${CFG}" "--x=${OTHER}" "$(date)" "` + "`id`" + `" "$1"]`}},
		{"case patterns are no commands", "case $x in\n  a) mcpwatch check ;;\nesac",
			[]string{`1:";;" ["mcpwatch" "check"]`}},
		{"subshell", "( cd sub && mcpwatch check )",
			[]string{`( 0:"&&" ["cd" "sub"]`, `&& 0:")" ["mcpwatch" "check"]`}},
		{"quotes over lines", "echo 'a\nb' \"c\nd\"\nmcpwatch check",
			[]string{`0:"\n" ["echo" "a\nb" "c\nd"]`, `3:"" ["mcpwatch" "check"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(parseScript(tc.script))
			if !slices.Equal(got, tc.want) {
				t.Errorf("parseScript(%q):\n got %q\nwant %q", tc.script, got, tc.want)
			}
		})
	}
}

func TestWordResolve(t *testing.T) {
	env := fakeEnv{"R": "r.json", "DIR": "out"}
	cmds := parseScript(`x "$DIR/${{ env.R }}" ${{ matrix.cfg }} "$UNSET"`)
	for i, want := range []struct {
		text  string
		known bool
	}{{"out/r.json", true}, {"${{ matrix.cfg }}", false}, {"${UNSET}", false}} {
		text, known := cmds[0].words[i+1].resolve(env)
		if text != want.text || known != want.known {
			t.Errorf("word %d: got %q %v, want %q %v", i+1, text, known, want.text, want.known)
		}
	}
}

func TestFindInvocation(t *testing.T) {
	for _, tc := range []struct {
		script string
		via    string // "" for none
		args   string
	}{
		{"mcpwatch check --strict", "mcpwatch", "check --strict"},
		{"./bin/mcpwatch check", "mcpwatch", "check"},
		{`"$HOME/go/bin/mcpwatch" check`, "mcpwatch", "check"},
		{"env -u X TOKEN=1 time -p mcpwatch check", "mcpwatch", "check"},
		{"timeout -k 5s 10m sudo -E mcpwatch check -c x", "mcpwatch", "check -c x"},
		{"go run -tags x ./cmd/mcpwatch check", "go run", "check"},
		{"go run github.com/mcpwatch/mcpwatch/cmd/mcpwatch@v0.1.0 check --strict", "go run", "check --strict"},
		{"go run ./cmd/other check", "", ""},
		{"docker run --rm -v $PWD:/w -w /w -e TOKEN ghcr.io/mcpwatch/mcpwatch:v0.1.0 check", "docker run", "check"},
		{"docker run --name mcpwatch alpine mcpwatch check", "", ""},
		{"echo mcpwatch check", "", ""},
		{"mcpwatch-scale check", "", ""},
	} {
		cmds := parseScript(tc.script)
		inv, ok := findInvocation(&cmds[0], fakeEnv{"HOME": "/home/runner"})
		var args []string
		for _, w := range inv.args {
			args = append(args, w.raw())
		}
		if ok != (tc.via != "") || inv.via != tc.via || strings.Join(args, " ") != tc.args {
			t.Errorf("%q: got %v %q %q, want %q %q", tc.script, ok, inv.via, args, tc.via, tc.args)
		}
	}
}

func TestSwallowed(t *testing.T) {
	bash := scriptState{cwd: ".", errexit: true, pipefail: true}
	sh := scriptState{cwd: ".", errexit: true}
	noE := scriptState{cwd: "."}
	for _, tc := range []struct {
		script string
		st     scriptState
		want   string // part of the reason; "" when the failure fails the step
	}{
		{"mcpwatch check", bash, ""},
		{"mcpwatch check\necho after", bash, ""},
		{"echo before && mcpwatch check\necho after", bash, ""},
		{"mcpwatch check || true", bash, "|| after it"},
		{"mcpwatch check || exit 78", bash, ""},
		{"mcpwatch check && echo ok", bash, ""},
		{"mcpwatch check && echo ok\necho after", bash, "&& after it"},
		{"mcpwatch check | tee log", bash, ""},
		{"mcpwatch check | tee log", sh, "without pipefail"},
		{"mcpwatch check\necho after", noE, "no -e"},
		{"mcpwatch check", noE, ""},
		{"if ! mcpwatch check; then exit 1; fi", bash, "negated"},
		{"if mcpwatch check; then echo ok; fi", bash, "condition"},
		{"mcpwatch check &\nwait", bash, "background"},
		{"false || mcpwatch check", bash, "only when the command before || fails"},
	} {
		cmds := parseScript(tc.script)
		i := slices.IndexFunc(cmds, func(c command) bool { return len(c.words) > 1 && c.words[0].raw() == "mcpwatch" })
		got := swallowed(cmds, i, finalList(cmds), tc.st)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestScriptState(t *testing.T) {
	sc := &scope{vars: map[string]envVar{"TOKEN": {name: "TOKEN", value: "x"}}, shell: map[string]string{}, unknown: map[string]bool{}}
	st := scriptState{cwd: ".", errexit: true, pipefail: true}
	for _, c := range parseScript("set +e -o pipefail\ncd sub/dir && cd ..\nexport R=out.json\nN=1\nset +o pipefail") {
		st.apply(&c, sc, 0)
	}
	if st.cwd != "sub" || st.errexit || st.pipefail {
		t.Errorf("state %+v", st)
	}
	if v, ok := sc.variable("R"); !ok || v != "out.json" || sc.vars["R"].value != "out.json" {
		t.Errorf("R: %q %v %+v", v, ok, sc.vars["R"])
	}
	if _, exported := sc.vars["N"]; exported {
		t.Error("N=1 alone is a shell variable, not exported")
	}
	st.apply(&parseScript("cd $(mktemp -d)")[0], sc, 0)
	if st.cwd != "" {
		t.Errorf("cd to an unknown place: cwd %q", st.cwd)
	}
}

func TestShellStops(t *testing.T) {
	for shell, want := range map[string][2]bool{
		"": {true, true}, "bash": {true, true}, "sh": {true, false}, "pwsh": {false, false},
		"bash {0}": {false, false}, "bash --noprofile --norc -eo pipefail {0}": {true, true}, "sh -e {0}": {true, false},
	} {
		e, p := shellStops(shell)
		if [2]bool{e, p} != want {
			t.Errorf("%q: errexit %v pipefail %v, want %v", shell, e, p, want)
		}
	}
}

func TestGitHubEnvWrites(t *testing.T) {
	s := &step{name: "token", script: "echo \"TOKEN=${{ steps.app.outputs.token }}\" >> \"$GITHUB_ENV\"\necho 'KEY<<EOF' >> $GITHUB_ENV\necho X=1 > other", lines: []int{10, 11, 12}}
	var got []string
	for _, v := range githubEnvWrites(s) {
		got = append(got, fmt.Sprintf("%s=%s@%d", v.name, v.value, v.line))
	}
	if want := []string{"TOKEN=${{ steps.app.outputs.token }}@10", "KEY=EOF@11"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParseScript(f *testing.F) {
	for _, s := range []string{"mcpwatch check \\\n --strict", "a && b || c", "cat <<EOF\nx\nEOF", "${{ x }} $(a \"b)\" `c", "'unterminated", "\"$(", "${", "case x in a) b;; esac"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range parseScript(s) {
			if c.line < 0 || c.line > strings.Count(s, "\n") {
				t.Fatalf("command at line %d of a script of %d lines", c.line, strings.Count(s, "\n")+1)
			}
			for _, w := range c.words {
				_, _ = w.resolve(fakeEnv{})
			}
		}
	})
}

// The shell reader is linear: a chain ten times as long costs about ten
// times as much, measured as a ratio (never against a wall clock). A
// quadratic reader costs a hundred times; the bound is 40.
func TestParseScriptLinear(t *testing.T) {
	cost := func(n int) time.Duration {
		src := strings.Repeat("true && ", n) + "mcpwatch check\n"
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if got := len(parseScript(src)); got != n+1 {
				t.Fatalf("%d commands, want %d", got, n+1)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := cost(5_000), cost(50_000)
	if ratio := float64(large) / float64(small); ratio > 40 {
		t.Errorf("50,000 links cost %v, %.0f times 5,000 (%v): the reader is not linear", large, ratio, small)
	}
}
