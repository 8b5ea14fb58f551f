package expand

import (
	"errors"
	"os/user"
	"reflect"
	"testing"
)

// One rule for every path a server names: "~/" at the home directory, a
// relative one at the server's folder, an absolute one as it is.
func TestPath(t *testing.T) {
	x := Expander{Lookup: mapLookup(map[string]string{"HOME": "/home/u"}), BaseDir: "/srv/app"}
	for in, want := range map[string]string{
		"~/ca.pem": "/home/u/ca.pem", "certs/ca.pem": "/srv/app/certs/ca.pem", "/etc/ca.pem": "/etc/ca.pem", "": "",
	} {
		if got, ok := x.Path(in); got != want || !ok {
			t.Errorf("Path(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got, ok := (Expander{}).Path("certs/ca.pem"); got != "certs/ca.pem" || !ok {
		t.Errorf("without a folder: %q, %v", got, ok)
	}
	real := CurrentUser
	t.Cleanup(func() { CurrentUser = real })
	CurrentUser = func() (*user.User, error) { return nil, errors.New("no account") }
	if got, ok := (Expander{Lookup: mapLookup(nil)}).Path("~/x"); ok || got != "~/x" {
		t.Errorf("no home at all: %q, %v; want the path as written and false", got, ok)
	}
}

// A credential's value says why it has none: written empty, a reference
// that gave nothing, a ${VAR:?message}; any other problem is an error.
func TestCredential(t *testing.T) {
	x := Expander{Lookup: mapLookup(map[string]string{"EMPTY": "", "GOOD": "tok"})}
	for in, want := range map[string][]string{
		"":                    {"it is written empty"},
		"${EMPTY}":            {"${EMPTY} is set but empty"},
		"Bearer ${UNSET}":     {"${UNSET} is not set"},
		"${EMPTY:?make one}":  {"variable EMPTY is empty: make one"},
		"${GOOD}":             nil,
		"${EMPTY:-}":          nil,
		"literal-token-value": nil,
	} {
		if _, why, err := x.Credential(in); err != nil || !reflect.DeepEqual(why, want) {
			t.Errorf("Credential(%q): why %q, err %v; want %q", in, why, err, want)
		}
	}
	if _, _, err := x.Credential("${file:/nonexistent/token}"); err == nil {
		t.Error("an unreadable secret file is no missing credential but an error")
	}
}
