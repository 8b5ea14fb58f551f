package main

import (
	"reflect"
	"testing"
)

func TestFamilySizes(t *testing.T) {
	a := "# HELP a_total Probes.\n" +
		"# TYPE a_total counter\n" +
		"a_total{server=\"x\"} 1\n" +
		"a_total{server=\"y\"} 2\n"
	h := "# HELP h Lag.\n" +
		"# TYPE h histogram\n" +
		"h_bucket{le=\"+Inf\"} 3\n" +
		"h_sum 1.5\n" +
		"h_count 3\n"
	// h is smaller, listed first: the result is sorted by size. # EOF
	// belongs to no family.
	got := familySizes([]byte(h + a + "# EOF"))
	want := []familySize{
		{Name: "a_total", Bytes: len(a), Series: 2},
		{Name: "h", Bytes: len(h), Series: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("familySizes = %+v, want %+v", got, want)
	}
}

func TestFamilySizesWithoutType(t *testing.T) {
	got := familySizes([]byte("up 1\nup{x=\"1\"} 0\n"))
	want := []familySize{{Name: "up", Bytes: len("up 1\nup{x=\"1\"} 0\n"), Series: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("familySizes = %+v, want %+v", got, want)
	}
}
