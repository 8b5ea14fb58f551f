package config

// Starter contracts files: where mcpwatch init writes a server's canary
// contracts when the configuration names no contracts file for it (a
// client config such as .mcp.json has no key for one), and where every
// command then finds them:
//
//	mcp-tools.lock.json
//	mcp-contracts/github.tools.json   # the contracts of server "github"
//
// The folder is beside the lock, so the lock and the contracts that go
// with it are committed together. A server that names a contracts file
// (contracts: in mcpwatch.yml, an mcp-probe toolsFile) keeps to it, and
// init extends that one instead. Inline calls: and a starter file add up;
// a tool in both is an error, as with contracts:.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// StarterDir is the folder beside the lock that holds the starter
// contracts files.
const StarterDir = "mcp-contracts"

// MaxContractsFileBytes bounds a contracts file read, as every file of a
// configuration is bounded.
const MaxContractsFileBytes = maxConfigBytes

// StarterFile is the starter contracts file of server beside lock, and
// false when the server's name cannot be a file name (a path separator, a
// leading dot, a character outside letters, digits and ._-@+): such a
// server's contracts go in a file that mcpwatch.yml names.
func StarterFile(lock, server string) (string, bool) {
	if server == "" || server[0] == '.' || len(server) > 200 {
		return "", false
	}
	for _, r := range server {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '-' || r == '@' || r == '+'
		if !ok {
			return "", false
		}
	}
	return filepath.Join(filepath.Dir(lock), StarterDir, server+".tools.json"), true
}

// ContractsTarget is the contracts file of s that mcpwatch init writes or
// extends: the one the configuration names, else its starter file beside
// the lock, where the next load finds it; false when there is neither
// (see StarterFile).
func (c *Config) ContractsTarget(s Server) (string, bool) {
	if s.ContractsFile != "" {
		return s.ContractsFile, true
	}
	lock := c.starterLock
	if lock == "" {
		lock = c.Lock
	}
	return StarterFile(lock, s.Name)
}

// applyStarterFiles reads the starter contracts file of every server that
// names no contracts file, when there is one beside the lock. Every
// problem names the file and the fix.
func (c *Config) applyStarterFiles() error {
	c.starterLock = c.Lock
	var errs []error
	for _, list := range [][]Server{c.Servers, c.Ignored} {
		for i := range list {
			if err := list[i].applyStarterFile(c.Lock); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Server) applyStarterFile(lock string) error {
	if s.ContractsFile != "" {
		return nil
	}
	path, ok := StarterFile(lock, s.Name)
	if !ok {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	f, err := readContractsFile(path)
	if err != nil {
		return &FieldError{File: path, Err: err,
			Problem: fmt.Sprintf("the contracts of server %q: %v", s.Name, err)}
	}
	byTool := map[string]contracts.Contract{}
	for _, c := range append(append([]contracts.Contract{}, s.Contracts...), s.Pending...) {
		byTool[c.Tool] = c
	}
	var twice []error
	for name, c := range f.Tools {
		_, dup := byTool[name]
		for _, p := range s.Proposed {
			dup = dup || p == name
		}
		if dup {
			twice = append(twice, &FieldError{File: path, Key: "tools." + name,
				Problem: fmt.Sprintf("server %q has a contract for %s in %s too; keep one of them", s.Name, name, s.Source)})
			continue
		}
		byTool[name] = c
	}
	if len(twice) > 0 {
		return errors.Join(twice...)
	}
	proposed := s.Proposed
	names := make([]string, 0, len(byTool))
	for n := range byTool {
		names = append(names, n)
	}
	sort.Strings(names)
	s.setContracts(names, byTool)
	s.Proposed = append(proposed, s.Proposed...)
	sort.Strings(s.Proposed)
	s.ContractsFile = path
	return nil
}
