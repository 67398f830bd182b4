package tools

import (
	"bytes"
	"encoding/binary"
)

// byteRank orders bytes from rarest (0) to most common (255) in source
// code, measured once over the Go distribution's src tree (text files only).
// The literal finder scans for the needle's rarest byte: memchr-style
// scanning is fast only while candidates are rare, and the first byte of a
// needle ('(' or 'f') is often among the most common.
var byteRank = [256]uint8{
	0, 22, 14, 18, 28, 23, 36, 42, 2, 252, 248, 15, 1, 80, 49, 3,
	24, 46, 47, 43, 8, 37, 64, 38, 13, 4, 9, 34, 32, 19, 25, 26,
	255, 177, 224, 163, 166, 169, 175, 172, 232, 231, 185, 181, 243, 188, 235, 233,
	251, 236, 229, 220, 221, 205, 218, 200, 212, 201, 226, 182, 174, 223, 171, 159,
	157, 230, 193, 207, 203, 215, 192, 186, 184, 208, 165, 173, 197, 199, 191, 206,
	202, 178, 213, 219, 216, 187, 194, 183, 195, 180, 167, 190, 204, 189, 160, 217,
	164, 247, 222, 241, 238, 254, 239, 227, 225, 246, 168, 198, 240, 228, 249, 244,
	234, 170, 250, 245, 253, 237, 211, 196, 242, 214, 176, 210, 179, 209, 156, 20,
	155, 143, 154, 148, 124, 145, 138, 96, 149, 131, 133, 88, 110, 73, 97, 89,
	106, 90, 93, 111, 136, 139, 87, 137, 144, 135, 69, 75, 132, 140, 103, 76,
	85, 95, 86, 94, 128, 123, 108, 112, 91, 134, 107, 116, 122, 114, 98, 82,
	83, 130, 121, 120, 99, 100, 84, 161, 102, 147, 125, 104, 141, 117, 129, 81,
	10, 16, 162, 127, 60, 58, 35, 67, 57, 79, 78, 61, 119, 77, 153, 109,
	71, 66, 29, 54, 52, 72, 74, 92, 150, 152, 63, 65, 53, 5, 30, 51,
	113, 146, 158, 151, 101, 126, 142, 115, 105, 70, 68, 56, 59, 55, 17, 62,
	118, 21, 39, 50, 40, 31, 45, 6, 44, 11, 12, 7, 27, 48, 41, 33}

// literalFinder finds a fixed needle in a buffer by its rarest byte.
type literalFinder struct {
	needle []byte
	off    int  // index in needle of the rarest byte
	rare   byte // needle[off]
}

func newLiteralFinder(needle []byte) literalFinder {
	off := 0
	for i, c := range needle {
		if byteRank[c] < byteRank[needle[off]] {
			off = i
		}
	}
	return literalFinder{needle: needle, off: off, rare: needle[off]}
}

// index returns the first index of the needle in hay, or -1.
func (f *literalFinder) index(hay []byte) int {
	n := len(f.needle)
	if n == 0 {
		return 0
	}
	i := f.off
	last := len(hay) - n + f.off // the last index the rare byte may have
	for i <= last {
		j := bytes.IndexByte(hay[i:last+1], f.rare)
		if j < 0 {
			return -1
		}
		i += j
		start := i - f.off
		if bytes.Equal(hay[start:start+n], f.needle) {
			return start
		}
		i++
	}
	return -1
}

// asciiLower writes data with A-Z lower-cased into dst, reusing its
// storage. It works eight bytes at a time: for each byte below 0x80 it
// computes "at least 'A'" and "above 'Z'" in the byte's high bit, and adds
// 0x20 where exactly the first holds.
func asciiLower(dst, data []byte) []byte {
	if cap(dst) < len(data) {
		dst = make([]byte, len(data), max(len(data), 2*cap(dst)))
	}
	dst = dst[:len(data)]
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		h := x &^ high // each byte's low seven bits, so the adds never carry
		geA := h + (0x80-'A')*ones
		gtZ := h + (0x80-'Z'-1)*ones
		upper := (geA &^ gtZ) &^ x & high
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(data); i++ {
		c := data[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}
