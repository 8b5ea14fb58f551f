package verdict

import (
	"testing"

	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestStateOf(t *testing.T) {
	ok := &probe.Result{OK: true}
	cases := []struct {
		name string
		res  *probe.Result
		diff lockstore.Diff
		want State
	}{
		{"pending", nil, lockstore.Diff{}, StatePending},
		{"failed", &probe.Result{Reason: probe.ReasonTimeout}, lockstore.Diff{Locked: true, Expected: []string{"a"}}, StateFailed},
		{"config", &probe.Result{Reason: probe.ReasonConfig}, lockstore.Diff{}, StateFailed},
		{"ok", ok, lockstore.Diff{Locked: true, Expected: []string{"a"}}, StateOK},
		{"missing", ok, lockstore.Diff{Locked: true, Missing: []string{"a"}}, StateMissing},
		{"forbidden", ok, lockstore.Diff{Locked: true, Forbidden: []string{"x"}}, StateForbidden},
		// One rule for both: a forbidden tool is worse than a missing one.
		{"forbidden and missing", ok, lockstore.Diff{Locked: true, Missing: []string{"a"}, Forbidden: []string{"x"}}, StateForbidden},
		{"extra is not a failure", ok, lockstore.Diff{Locked: true, Extra: []string{"b"}}, StateOK},
		{"unlocked is not a failure", ok, lockstore.Diff{}, StateOK},
		{"a duplicate name is not a failure", ok, lockstore.Diff{Locked: true, Duplicate: []string{"a"}}, StateOK},
	}
	for _, c := range cases {
		if got := StateOf(c.res, c.diff); got != c.want {
			t.Errorf("%s: StateOf = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestJudgeStrict(t *testing.T) {
	ok := &probe.Result{OK: true}
	d := lockstore.Diff{Locked: true, Extra: []string{"b"}, SchemaChanged: []string{"a"}}
	if k, failed := Worst(Judge(ok, d, false)); failed || k != KindOK {
		t.Errorf("not strict: %s %v, want ok", k, failed)
	}
	if k, failed := Worst(Judge(ok, d, true)); !failed || k != KindSchemaChanged {
		t.Errorf("strict: %s %v, want schema_changed", k, failed)
	}
	failedProbe := &probe.Result{Reason: probe.ReasonConfig}
	if k, _ := Worst(Judge(failedProbe, lockstore.Diff{}, false)); k != KindConfigError {
		t.Errorf("config failure: %s", k)
	}
}

// A tool name listed twice is reported, and fails only when strict.
func TestJudgeDuplicate(t *testing.T) {
	ok := &probe.Result{OK: true}
	d := lockstore.Diff{Locked: true, Duplicate: []string{"a"}}
	if k, failed := Worst(Judge(ok, d, false)); failed || k != KindOK {
		t.Errorf("not strict: %s %v, want ok", k, failed)
	}
	if k, failed := Worst(Judge(ok, d, true)); !failed || k != KindDuplicate {
		t.Errorf("strict: %s %v, want duplicate", k, failed)
	}
}
