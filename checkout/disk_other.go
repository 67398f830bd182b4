//go:build !unix

package checkout

import "io/fs"

// allocated is the disk a file takes: here, its length.
func allocated(info fs.FileInfo) int64 { return info.Size() }
