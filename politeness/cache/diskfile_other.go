//go:build !unix

package cache

// This file opens, renames and locks the disk store's files where the unix calls do not apply.

import (
	"errors"
	"os"
)

func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func renameFile(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// lockFile reports that locks are not available here: every process writes segments of its own.
func lockFile(f *os.File) error { return errors.ErrUnsupported }

func unlockFile(f *os.File) error { return errors.ErrUnsupported }
