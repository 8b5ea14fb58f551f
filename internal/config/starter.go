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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// StarterDir is the folder beside the lock that holds the starter
// contracts files.
const StarterDir = "mcp-contracts"

// MaxContractsFileBytes bounds a contracts file read, as every file of a
// configuration is bounded.
const MaxContractsFileBytes = MaxFileBytes

// StarterFile is the starter contracts file of server beside lock:
// mcp-contracts/NAME.tools.json, NAME the server's name as starterName
// writes it. Every name a client file allows has one; false only for an
// empty name.
func StarterFile(lock, server string) (string, bool) {
	name := starterName(server)
	if name == "" {
		return "", false
	}
	return filepath.Join(filepath.Dir(lock), StarterDir, name+starterSuffix), true
}

const starterSuffix = ".tools.json"

// maxStarterName bounds the file name starterName makes, its suffix
// added, within the 255 bytes a file name may have on every file system
// mcpwatch runs on.
const maxStarterName = 255 - len(starterSuffix)

// starterName is a server's name as a file name, safe on every file
// system and reversible: a name of letters, digits
// and ._-@+ that does not start with a dot is itself (so the file of every
// server whose name was a file name before stays where it is), and in any
// other name each byte outside those, and a leading dot, is written %XX
// (upper-case hex of its UTF-8 bytes: "Framelink MCP for Figma" is
// "Framelink%20MCP%20for%20Figma"). A name whose escaped form would pass
// maxStarterName keeps its first bytes, cut at an escape, and ends in
// "~" and 16 hex digits of its SHA-256: one file per name still, though
// that one is not read back. "" for an empty name.
func starterName(server string) string {
	if server == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(server); i++ {
		c := server[i]
		if plainNameByte(c) && (i > 0 || c != '.') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	out := b.String()
	if len(out) <= maxStarterName {
		return out
	}
	sum := sha256.Sum256([]byte(server))
	tag := "~" + hex.EncodeToString(sum[:8])
	cut := maxStarterName - len(tag)
	// Not in the middle of an escape.
	if i := strings.LastIndexByte(out[:cut], '%'); i >= cut-2 {
		cut = i
	}
	return out[:cut] + tag
}

// plainNameByte: a byte a server's name keeps in its file name.
func plainNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '@' || c == '+'
}

// ContractsTarget is the contracts file of s that mcpwatch init writes or
// extends: the one the configuration names, else its starter file beside
// the lock, where the next load finds it; false for a server without a
// name.
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
