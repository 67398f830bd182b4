//go:build unix

package checkout

import (
	"io/fs"
	"syscall"
)

// allocated is the disk a file takes: its blocks where the system says,
// else its length.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Blocks > 0 {
		return st.Blocks * 512
	}
	return info.Size()
}
