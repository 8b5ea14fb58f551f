// Package bytesize reads a size in bytes the one way mcpwatch takes one:
// in a flag (--max-message-bytes, --memory.limit), in mcpwatch.yml
// (max_message_bytes) and from GOMEMLIMIT.
package bytesize

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Grammar says what Parse reads, for help texts and errors.
const Grammar = "a whole number of bytes, with an optional unit: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024)"

// units are the units Parse reads, by their lower-case spelling: the
// case of a unit does not matter, since no two of them differ only by it.
// A unit with "i" is binary, as IEC writes it; one with "B" and no "i" is
// decimal, as SI writes it; a bare letter is binary, as GNU tools, Docker
// and Kubernetes' own K, M, G read it.
var units = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

// Parse reads s as Grammar says: "4194304", "4MiB", "4 MiB", "4M" and
// "4mib" are 4 MiB, "4MB" and "4 mb" are 4,000,000. White space around
// the number and the unit is ignored. The size must be positive and fit
// in an int64; a fraction ("1.5GiB") is refused.
func Parse(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	mult, ok := units[strings.ToLower(strings.TrimSpace(s[i:]))]
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if !ok || err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, errors.New("not a positive size: write " + Grammar)
	}
	return n * mult, nil
}
