package discover

import (
	"io/fs"
	"os"
	"path/filepath"
)

// folders tells whether two spellings of a path name one folder, as the
// file system answers it: the folders they lead to are one (os.SameFile),
// which resolves every symlink (on macOS, /tmp and /var are symlinks into
// /private) and compares names as the file system does (regardless of
// case on macOS's and Windows' usual file systems, and of Unicode
// normalization on macOS). A consent recorded for a folder under one
// spelling holds for a project named under another. Each path is looked
// up once.
type folders struct {
	stat  func(string) (fs.FileInfo, error)
	infos map[string]fs.FileInfo // nil for a path that is no folder one can look up
}

func newFolders(stat func(string) (fs.FileInfo, error)) *folders {
	return &folders{stat: stat, infos: map[string]fs.FileInfo{}}
}

// same reports whether a and b are one folder: the same path once made
// absolute and clean, or two paths the file system leads to one folder.
func (f *folders) same(a, b string) bool {
	a, b = cleanDir(a), cleanDir(b)
	if a == b {
		return true
	}
	ia, ib := f.info(a), f.info(b)
	return ia != nil && ib != nil && os.SameFile(ia, ib)
}

// within reports whether dir is root or inside it: whether root is one of
// the folders that hold dir's real folder (every symlink of its path
// resolved), itself included.
func (f *folders) within(dir, root string) bool {
	d := cleanDir(dir)
	if real, err := filepath.EvalSymlinks(d); err == nil {
		d = real
	}
	for {
		if f.same(d, root) {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

func (f *folders) info(p string) fs.FileInfo {
	if fi, ok := f.infos[p]; ok {
		return fi
	}
	fi, err := f.stat(p)
	if err != nil || !fi.IsDir() {
		fi = nil
	}
	f.infos[p] = fi
	return fi
}
