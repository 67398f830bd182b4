// Package codec encrypts what Longrun hands to Temporal and to the
// transcript store: AES-256-GCM from the standard library, under keys an
// operator gives the worker and the CLI in a file (never in history), with
// the key id beside every ciphertext so keys can be rotated: the first key
// encrypts, every key decrypts.
package codec

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// EnvKeysFile is the variable naming the key file when --encryption-keys
// is not given.
const EnvKeysFile = "LONGRUN_ENCRYPTION_KEYS"

var (
	// ErrUnknownKey marks ciphertext under a key id the key file does not
	// hold (a key removed too early, or another deployment's data).
	ErrUnknownKey = errors.New("unknown encryption key")
	// ErrDecrypt marks ciphertext that does not authenticate under its key:
	// it was changed, or the key of that id is not the one that wrote it.
	ErrDecrypt = errors.New("ciphertext does not authenticate (tampered, or a different key under the same id)")
)

// keyIDPattern keeps ids printable and short: they travel in every
// payload's metadata and in error messages.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Keys is a key ring: the first key encrypts, every key decrypts. It is
// safe for concurrent use.
type Keys struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

// LoadKeys reads the key file at path (see ParseKeys).
func LoadKeys(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("encryption keys: %w", err)
	}
	defer f.Close()
	k, err := ParseKeys(f, path)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// ParseKeys reads one KEYID=BASE64 line per key (standard base64 of 32
// bytes); blank lines and lines starting with # are skipped. name is the
// file's name for messages. A malformed line is refused naming its number
// and never its content, not even the id: a line holding only a key also
// parses as an id (base64 ends in '='), so any of it may be key material.
func ParseKeys(r io.Reader, name string) (*Keys, error) {
	k := &Keys{aeads: map[string]cipher.AEAD{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("encryption keys %s line %d: %s (want KEYID=BASE64 of %d bytes, e.g. made with: printf 'k1=%%s\\n' \"$(head -c %d /dev/urandom | base64)\")", name, n, why, KeySize, KeySize)
		}
		id, b64, ok := strings.Cut(line, "=")
		if !ok {
			return nil, bad("no '='")
		}
		id = strings.TrimSpace(id)
		if !keyIDPattern.MatchString(id) {
			return nil, bad("the key id must be 1 to 64 of A-Z a-z 0-9 . _ -")
		}
		if _, dup := k.aeads[id]; dup {
			return nil, bad("the key id is given twice (on an earlier line too)")
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			return nil, bad("the key is not valid standard base64")
		}
		if len(raw) != KeySize {
			return nil, bad(fmt.Sprintf("the key is %d bytes, not %d", len(raw), KeySize))
		}
		aead, err := newAEAD(raw)
		if err != nil {
			return nil, bad(err.Error())
		}
		k.ids = append(k.ids, id)
		k.aeads[id] = aead
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("encryption keys %s: %w", name, err)
	}
	if len(k.ids) == 0 {
		return nil, fmt.Errorf("encryption keys %s: no keys (want one KEYID=BASE64 line per %d-byte key; the first encrypts)", name, KeySize)
	}
	return k, nil
}

// NewKeys makes a ring from raw keys in order (the first encrypts), for
// tests and for callers that hold keys already.
func NewKeys(ids []string, keys [][]byte) (*Keys, error) {
	if len(ids) != len(keys) || len(ids) == 0 {
		return nil, fmt.Errorf("encryption keys: want as many ids as keys, at least one")
	}
	var b bytes.Buffer
	for i, id := range ids {
		fmt.Fprintf(&b, "%s=%s\n", id, base64.StdEncoding.EncodeToString(keys[i]))
	}
	return ParseKeys(&b, "(given)")
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Current is the id of the key that encrypts.
func (k *Keys) Current() string { return k.ids[0] }

// IDs are the ids of every key, the encrypting one first.
func (k *Keys) IDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plain under the current key with a random nonce and binds
// ad (authenticated, not stored) to it. It returns the key id and
// nonce||ciphertext.
func (k *Keys) Seal(plain, ad []byte) (string, []byte, error) {
	id := k.ids[0]
	aead := k.aeads[id]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("encrypt: nonce: %w", err)
	}
	return id, aead.Seal(nonce, nonce, plain, ad), nil
}

// Open decrypts what Seal returned under key id with the same ad.
func (k *Keys) Open(id string, sealed, ad []byte) ([]byte, error) {
	aead, ok := k.aeads[id]
	if !ok {
		return nil, fmt.Errorf("decrypt: key id %q: %w (the key file has %s; keep a retired key in the file, after the current one, while anything it encrypted is still read)", id, ErrUnknownKey, strings.Join(k.ids, ", "))
	}
	ns := aead.NonceSize()
	if len(sealed) < ns+aead.Overhead() {
		return nil, fmt.Errorf("decrypt with key %q: %w: %d bytes is too short", id, ErrDecrypt, len(sealed))
	}
	plain, err := aead.Open(nil, sealed[:ns], sealed[ns:], ad)
	if err != nil {
		return nil, fmt.Errorf("decrypt with key %q: %w", id, ErrDecrypt)
	}
	return plain, nil
}
