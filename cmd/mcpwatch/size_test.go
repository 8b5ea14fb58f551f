package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/memlimit"
)

// A size reads the same wherever it is written: --max-message-bytes,
// max_message_bytes in mcpwatch.yml and --memory.limit. Among them, the
// spellings each of the three read differently or refused: 4MB (the
// configuration's 4,000,000, refused by the flag), 4M (the flag's 4 MiB,
// refused by the configuration and --memory.limit), and spaces.
func TestOneSizeGrammarForFlagsConfigAndMemoryLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"4M": 4 << 20, "4MB": 4_000_000, "4 MiB": 4 << 20, " 4mib ": 4 << 20, "512KB": 512_000, "1048576": 1 << 20,
	} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			f := probeFlags{maxMessage: in}
			opts, err := f.options()
			if err != nil || opts.MaxMessageBytes != want {
				t.Errorf("--max-message-bytes %q = %d, %v; want %d", in, opts.MaxMessageBytes, err, want)
			}

			path := filepath.Join(t.TempDir(), "mcpwatch.yml")
			yml := "defaults: {max_message_bytes: \"" + in + "\"}\nservers:\n  s: {command: server}\n"
			if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil || cfg.Defaults.MaxMessageBytes != want {
				var got int64
				if cfg != nil {
					got = cfg.Defaults.MaxMessageBytes
				}
				t.Errorf("max_message_bytes %q = %d, %v; want %d", in, got, err, want)
			}

			s, err := memlimit.Choose(in, "", t.TempDir(), bytesize.Parse)
			if err != nil || s.Bytes != want {
				t.Errorf("--memory.limit %q = %d, %v; want %d", in, s.Bytes, err, want)
			}
		})
	}
}
