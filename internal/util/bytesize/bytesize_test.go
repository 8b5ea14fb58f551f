package bytesize

import "testing"

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{
		"1024": 1024, "512B": 512, "512 b": 512,
		// Powers of 1024, however written.
		"4KiB": 4 << 10, "4MiB": 4 << 20, "4 MiB": 4 << 20, " 4MiB ": 4 << 20, "4mib": 4 << 20, "2GiB": 2 << 30, "1TiB": 1 << 40,
		"4K": 4 << 10, "4M": 4 << 20, "4 M": 4 << 20, "4m": 4 << 20, "2G": 2 << 30, "1T": 1 << 40,
		// Powers of 1000.
		"4kB": 4000, "4KB": 4000, "4MB": 4_000_000, "4 MB": 4_000_000, "4mb": 4_000_000, "2GB": 2_000_000_000, "1TB": 1_000_000_000_000,
	} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", " ", "0", "0MiB", "-1", "+1", "MiB", "1.5GiB", "4 4MiB", "4MiBs", "4Mi", "4 PB", "4e6", "0x10",
		"9223372036854775808", "8388608TiB", "9223372036854775807KiB"} {
		if n, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", s, n)
		}
	}
}
