//go:build unix

package cache

// This file opens, renames and locks the disk store's files with one system call each.

import (
	"os"
	"syscall"
)

// openFile is os.OpenFile without the runtime's poller. os.OpenFile tries to register every file
// with it, which for a regular file costs four more system calls (set non-blocking, register,
// fail, restore) on each record read or written; os.NewFile of a blocking descriptor skips that.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// renameFile is os.Rename without its check that newpath is not a directory (one stat): record
// paths never are.
func renameFile(oldpath, newpath string) error {
	if err := syscall.Rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// lockFile takes an exclusive lock on f without waiting (flock), which the system releases when
// f is closed or the process exits; it fails when another open file holds it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

// unlockFile releases the lock lockFile took on f.
func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
