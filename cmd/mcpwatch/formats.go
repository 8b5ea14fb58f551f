package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
)

// A command's output formats are a table: the writer of each, by its
// --format name. A new format is one entry: --format's help and the error
// for an unknown one list the table's keys (formatNames), and the command
// writes with the entry --format chose.

// formats are the formats of a command whose output is a T.
type formats[T any] map[string]func(io.Writer, T) error

// formatNames are a table's keys: text, every command's default, first,
// then the others in alphabetical order.
func formatNames[V any](table map[string]V) []string {
	return namesFirst(table, preflight.FormatText)
}

// namesFirst are a table's keys, first (its default) first, then the
// others in alphabetical order.
func namesFirst[V any](table map[string]V, first string) []string {
	names := slices.Sorted(maps.Keys(table))
	if i := slices.Index(names, first); i > 0 {
		names = slices.Insert(slices.Delete(names, i, i+1), 0, first)
	}
	return names
}

// writeOutput writes v in the format --format chose: to --output when
// given (then, for a format other than text, the text goes to stdout too,
// for the log), else to stdout.
func writeOutput[T any](c *cli, o *outputFlags, table formats[T], v T) error {
	write := table[o.format]
	if o.output == "" {
		if err := write(c.stdout, v); err != nil {
			return fmt.Errorf("write to stdout: %w", err)
		}
		return nil
	}
	var buf bytes.Buffer
	if err := write(&buf, v); err != nil {
		return err
	}
	if err := atomicfile.Write(o.output, buf.Bytes()); err != nil {
		return err // it names the file
	}
	if text := table[preflight.FormatText]; o.format != preflight.FormatText && text != nil {
		if err := text(c.stdout, v); err != nil {
			return fmt.Errorf("write to stdout: %w", err)
		}
	}
	return nil
}
