package launch

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/expand"
)

// parseEnvFile reads a dotenv file as VS Code's envFile: KEY=VALUE lines,
// blank lines and # comments skipped, an optional "export " prefix, and one
// pair of matching quotes around a value removed. Values are not expanded.
// Errors name the line, never its content.
func parseEnvFile(data []byte) (map[string]string, error) {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), expand.MaxSecretBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("line %d is not KEY=VALUE", n)
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		env[key] = value
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return env, nil
}
