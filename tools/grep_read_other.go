//go:build !linux

package tools

import (
	"errors"
	"io"
)

// readWhole reads the regular file name in d into buf (grown as needed),
// opened beneath the directory's handle. ok is false for a missing,
// special or oversized file.
func readWhole(buf []byte, d *walkDir, name string, maxSize int64) (data, grown []byte, ok bool) {
	f, err := d.root.Open(name)
	if err != nil {
		return nil, buf, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSize {
		return nil, buf, false
	}
	size := int(fi.Size())
	if cap(buf) < size {
		buf = make([]byte, size, max(size, 2*cap(buf)))
	}
	n, err := io.ReadFull(f, buf[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, buf, false
	}
	return buf[:n], buf, true
}
