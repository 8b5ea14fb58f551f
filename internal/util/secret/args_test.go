package secret

import (
	"strconv"
	"strings"
	"testing"
)

func TestArgSecrets(t *testing.T) {
	cases := []struct {
		args []string
		want []string // "arg:name:value" of each span, credential marked "*"
	}{
		{[]string{"--api-key", "sk-1"}, []string{"1:--api-key:sk-1*"}},
		{[]string{"--api-key=${KEY}"}, []string{"0:--api-key:${KEY}*"}},
		{[]string{"--token=t", "--access-token", "a", "--password", "p", "--secret", "s"},
			[]string{"0:--token:t*", "2:--access-token:a*", "4:--password:p*", "6:--secret:s*"}},
		{[]string{"--port", "8080", "--mode=ro", "-y", "pkg"}, nil},
		{[]string{"https://u:p@h.example/mcp?api_key=k1&mode=ro#f"},
			[]string{"0:userinfo:u:p*", "0:api_key:k1*", "0:mode:ro", "0:fragment:f"}},
		{[]string{"--db=postgresql://mcp:${PW}@127.0.0.1/app"}, []string{"0:userinfo:mcp:${PW}*"}},
		{[]string{"a1b2c3d4e5f6a7b8c9d0e1f2a3b4"}, []string{"0::a1b2c3d4e5f6a7b8c9d0e1f2a3b4"}},
		{[]string{"--key", ""}, nil},
	}
	for _, tc := range cases {
		var got []string
		for _, s := range ArgSecrets(tc.args) {
			g := strings.Join([]string{strconv.Itoa(s.Arg), s.Name, tc.args[s.Arg][s.Start:s.End]}, ":")
			if s.Credential {
				g += "*"
			}
			got = append(got, g)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ArgSecrets(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
