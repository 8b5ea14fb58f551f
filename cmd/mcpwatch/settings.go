package main

// A daemon's settings come in layers, merged by koanf, each over the one
// before: a flag's default, its environment variable, the command line.
// The variable of a flag is MCPWATCH_ and the flag's name in capitals,
// "." and "-" written "_": --shard.from-pod-name is
// MCPWATCH_SHARD_FROM_POD_NAME, --web.listen-address
// MCPWATCH_WEB_LISTEN_ADDRESS (a list is comma-separated, as on the command
// line). A Kubernetes manifest sets them from the downward API; a systemd
// unit from an EnvironmentFile.
//
// (The configuration file is a layer of its own, below all of these: the
// flags that override it, --era and --timeout, override every server's
// value, not a key of the file: the daemon hands them to each probe's
// request, and config.Server.ProbeTimeout decides between --timeout and a
// start_timeout.)

import (
	"encoding/csv"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

const envPrefix = "MCPWATCH_"

// keyDelim separates koanf's key levels. Flag names hold "." and "-", so
// it is a character no flag name has: every flag is one key.
const keyDelim = "/"

// envVar is the variable that gives the flag called name.
func envVar(name string) string {
	return envPrefix + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(name))
}

// withEnv lets every flag of fs be given by its variable, and says so in
// its help.
func withEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) { f.Usage += " [$" + envVar(f.Name) + "]" })
}

// layer merges the environment (read with lookup) and the command line,
// parsed already into fs, and decodes the result into settings, the struct
// whose fields the flags were bound to, tagged with the flags' names
// (`koanf:"shard.index"`). given reports whether a setting came from the
// command line or the environment rather than its default. A variable
// whose value its flag would refuse is a usage error naming the variable.
func layer(fs *pflag.FlagSet, lookup func(string) (string, bool), settings any) (given func(name string) bool, err error) {
	byVar := map[string]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) { byVar[envVar(f.Name)] = f })
	var fromEnv []string // flag names
	environ := func() []string {
		var out []string
		for name := range byVar {
			if v, ok := lookup(name); ok && v != "" {
				out = append(out, name+"="+v)
			}
		}
		slices.Sort(out)
		return out
	}
	k := koanf.New(keyDelim)
	err = k.Load(env.Provider(keyDelim, env.Opt{Prefix: envPrefix, EnvironFunc: environ,
		TransformFunc: func(name, v string) (string, any) {
			f := byVar[name]
			fromEnv = append(fromEnv, f.Name)
			if strings.HasSuffix(f.Value.Type(), "Slice") || strings.HasSuffix(f.Value.Type(), "Array") {
				return f.Name, splitList(v)
			}
			return f.Name, v
		}}), nil)
	if err != nil {
		return nil, err
	}
	// The command line over the environment: posflag takes a flag that
	// was given, and the default of one no layer below has.
	if err := k.Load(posflag.Provider(fs, keyDelim, k), nil); err != nil {
		return nil, err
	}
	flat := koanf.UnmarshalConf{Tag: "koanf", FlatPaths: true}
	if err := k.UnmarshalWithConf("", settings, flat); err != nil {
		// Only a variable's value is a string no flag has parsed: find the
		// one that does not decode, and name it.
		for _, name := range fromEnv {
			one := koanf.New(keyDelim)
			_ = one.Set(name, k.Get(name))
			if one.UnmarshalWithConf("", reflect.New(reflect.TypeOf(settings).Elem()).Interface(), flat) != nil {
				f := fs.Lookup(name)
				return nil, usagef("$%s=%q is not a valid --%s: want %s", envVar(name), k.String(name), name, kindOf(f))
			}
		}
		return nil, err
	}
	return func(name string) bool { return fs.Changed(name) || slices.Contains(fromEnv, name) }, nil
}

// splitList reads a list as pflag reads one on the command line: comma-
// separated, with CSV quoting.
func splitList(v string) []string {
	items, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return []string{v}
	}
	return items
}

// kindOf says what a flag takes, for an error.
func kindOf(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int64", "uint":
		return "an integer"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 10s"
	}
	return fmt.Sprintf("a %s", f.Value.Type())
}
