package lockstore

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// canonicalNumber writes exactly what big.Rat's RatString writes (what
// locked fingerprints were made with) for every number within its bounds,
// and keeps the others as written.
func TestCanonicalNumberMatchesExactArithmetic(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1", "1"}, {"1.0", "1"}, {"10e-1", "1"}, {"-0", "0"}, {"0.0e5", "0"}, {"-0.75", "-3/4"},
		{"0.1", "1/10"}, {"1e3", "1000"}, {"1E+3", "1000"}, {"2.50e-2", "1/40"}, {"123.456", "15432/125"},
		{"18446744073709551615", "18446744073709551615"}, {"1e400", "1" + strings.Repeat("0", 400)},
		{"0.0000000000000000001", "1/10000000000000000000"}, {"9999999999999999999e-19", "9999999999999999999/10000000000000000000"},
		// Beyond the bounds: kept as written.
		{"1e401", "~1e401"}, {"1e-401", "~1e-401"}, {"1e99999999999999999999", "~1e99999999999999999999"},
		{"0.00000000000000000001", "~0.00000000000000000001"},      // 20 decimal places
		{"1.2345678901234567891e5", "~1.2345678901234567891e5"},    // 20 significant digits in a fraction
		{strings.Repeat("7", 101), "~" + strings.Repeat("7", 101)}, // longer than maxNumberLen
		{"12345678901234567890123", "12345678901234567890123"},     // an integer needs no division
	}
	for _, tc := range cases {
		if got := canonicalNumber(tc.in); got != tc.want {
			t.Errorf("canonicalNumber(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !strings.HasPrefix(tc.want, "~") {
			if r, ok := new(big.Rat).SetString(tc.in); !ok || r.RatString() != tc.want {
				t.Errorf("the test is wrong: big.Rat says %q is %v", tc.in, r)
			}
		}
	}
}

// FuzzCanonicalNumber builds numerals, huge ones included (a digit pattern
// repeated up to 4 million characters, in the mantissa, the fraction or
// the exponent), and checks that canonicalNumber agrees with exact
// arithmetic wherever it computes a value, and that a schema holding the
// numeral fingerprints. A canonicalization that is not linear in the
// literal makes the huge inputs take seconds each, and the fuzzer crawl.
func FuzzCanonicalNumber(f *testing.F) {
	f.Add(false, "1", "", "", uint32(0), uint8(0))
	f.Add(true, "12", "5", "-3", uint32(0), uint8(0))
	f.Add(false, "7", "", "", uint32(3_000_000), uint8(0))
	f.Add(false, "1", "0", "", uint32(3_000_000), uint8(1))
	f.Add(false, "1", "", "9", uint32(3_000_000), uint8(2))
	f.Fuzz(func(t *testing.T, neg bool, intPart, fracPart, exp string, repeat uint32, where uint8) {
		for _, p := range []*string{&intPart, &fracPart, &exp} {
			*p = keepDigits(*p, 40)
		}
		if intPart == "" {
			intPart = "0"
		}
		if intPart != "0" {
			intPart = "1" + intPart // no leading zero, as JSON wants
		}
		// Repeat one part into a huge numeral.
		repeat %= 4 << 20
		switch where % 3 {
		case 0:
			if intPart == "0" {
				intPart = "1"
			}
			intPart += strings.Repeat(intPart[len(intPart)-1:], int(repeat))
		case 1:
			fracPart += strings.Repeat("0", int(repeat)) + "1"
		case 2:
			if exp == "" {
				exp = "1"
			}
			exp += strings.Repeat(exp[len(exp)-1:], int(repeat)%1000)
		}
		n := intPart
		if neg {
			n = "-" + n
		}
		if fracPart != "" {
			n += "." + fracPart
		}
		if exp != "" {
			n += "e" + exp
		}
		got := canonicalNumber(n)
		if !strings.HasPrefix(got, "~") {
			want, ok := new(big.Rat).SetString(n)
			if !ok || got != want.RatString() {
				t.Fatalf("canonicalNumber(%q) = %q, want %v", n, got, want)
			}
		} else if got != "~"+n {
			t.Fatalf("canonicalNumber(%q) = %q: not kept as written", n, got)
		}
		schema := `{"type":"number","maximum":` + n + `}`
		if !json.Valid([]byte(schema)) {
			t.Fatalf("built an invalid numeral %.80q", n)
		}
		if fp := Fingerprint(json.RawMessage(schema)); !validHash(fp) {
			t.Fatalf("Fingerprint = %q", fp)
		}
	})
}

func keepDigits(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < max; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// BenchmarkFingerprintHugeNumber is the cost of fingerprinting a schema
// holding a 3-million-digit number (within the 4 MiB message cap).
func BenchmarkFingerprintHugeNumber(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","maximum":1` + strings.Repeat("7", 3_000_000) + `}}}`)
	b.SetBytes(int64(len(schema)))
	for b.Loop() {
		Fingerprint(schema)
	}
}
