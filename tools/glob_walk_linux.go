//go:build linux

package tools

import (
	"os"
	"syscall"
)

// listingFile opens dir itself for listing its entries. A directory opened
// through os.Root makes ReadDir lstat every entry (so a lazy Info never
// looks up a name from outside the root), one system call per file; a
// search over thousands of files pays a third more time for it. Here the
// descriptor is duplicated into a plain File, whose entries carry only
// the type the kernel reports. Callers never call Info on them: they
// Lstat beneath dir instead.
func listingFile(dir *os.Root) (*os.File, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var dup int
	var dupErr error
	if err := rc.Control(func(fd uintptr) {
		dup, dupErr = syscall.Dup(int(fd))
		if dupErr == nil {
			syscall.CloseOnExec(dup)
		}
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return os.NewFile(uintptr(dup), f.Name()), nil
}
