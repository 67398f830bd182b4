package untrusted

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON is encoded JSON with every hidden character (Hidden: C1 controls,
// bidi controls, zero-width characters...) written as a \u escape. It
// decodes to the same value, byte for byte; printed on a terminal, no
// such character acts. encoding/json escapes the C0 controls already but
// writes these as they are. Outside strings JSON is ASCII, so every one
// is inside a string, where the escape is valid.
func JSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x80 && Hidden(r) }) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 64)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r >= 0x80 && Hidden(r) && r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		case r >= 0x80 && Hidden(r):
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			out.Write(b[i : i+size])
		}
		i += size
	}
	return out.Bytes()
}
