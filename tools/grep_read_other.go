//go:build !unix

package tools

import (
	"errors"
	"io"
	"os"
)

// readWhole reads the regular file abs into buf (grown as needed). ok is
// false for a missing, special or oversized file.
func readWhole(buf []byte, abs string, maxSize int64) (data, grown []byte, ok bool) {
	f, err := os.Open(abs)
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
