package preflight

import (
	"errors"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data: a temp file in the same
// directory, fsync, close, rename, fsync the directory. On any failure
// before the rename the old file is untouched and the temp file removed.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	perm := os.FileMode(0o644)
	if fi, statErr := os.Stat(path); statErr == nil {
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil // the file is in place; only its durability is unconfirmed
	}
	defer d.Close()
	if syncErr := d.Sync(); syncErr != nil && !errors.Is(syncErr, os.ErrInvalid) {
		return syncErr
	}
	return nil
}

// WriteFileAtomic replaces path with data atomically (see WriteReceipt),
// for the CLI's --output files.
func WriteFileAtomic(path string, data []byte) error {
	return writeFileAtomic(path, data)
}
