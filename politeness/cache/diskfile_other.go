//go:build !unix

package cache

// This file opens and renames record files where the unix shortcuts do not apply.

import "os"

func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func renameFile(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
