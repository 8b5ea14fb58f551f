package probe

import (
	"slices"
	"testing"
)

func TestServerEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/root", "SECRET=s3cret", "LC_ALL=C", "LANG=C.UTF-8", "TERM=xterm", "AWS_KEY=k", "malformed"}
	tests := []struct {
		name   string
		target Target
		want   []string
	}{
		{"minimal", Target{}, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "LANG=C.UTF-8", "TERM=xterm"}},
		{"own variables win and come last, sorted", Target{Env: map[string]string{"TOKEN": "t", "HOME": "/srv", "A": "1"}},
			[]string{"PATH=/bin", "LC_ALL=C", "LANG=C.UTF-8", "TERM=xterm", "A=1", "HOME=/srv", "TOKEN=t"}},
		{"inherit everything", Target{InheritEnv: true, Env: map[string]string{"SECRET": "mine"}},
			[]string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "LANG=C.UTF-8", "TERM=xterm", "AWS_KEY=k", "SECRET=mine"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := serverEnv(tc.target, environ)
			if !slices.Equal(got, tc.want) {
				t.Errorf("env = %q\nwant  %q", got, tc.want)
			}
		})
	}
}
