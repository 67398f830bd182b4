package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func ring(t *testing.T, ids ...string) *Keys {
	t.Helper()
	var raw [][]byte
	for _, id := range ids {
		raw = append(raw, key(id[0]))
	}
	k, err := NewKeys(ids, raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCodec(t *testing.T) {
	const secret = "MARKER-SECRET-42"
	plain, err := converter.GetDefaultDataConverter().ToPayload("the file says " + secret)
	if err != nil {
		t.Fatal(err)
	}
	encodeWith := func(t *testing.T, k *Keys) *commonpb.Payload {
		out, err := New(k).Encode([]*commonpb.Payload{plain})
		if err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	tests := []struct {
		name    string
		encode  []string // key ring that encodes; nil: the payload stays plain
		decode  []string // key ring that decodes
		tamper  func(p *commonpb.Payload)
		wantErr string
		isErr   error
	}{
		{name: "round trip", encode: []string{"a"}, decode: []string{"a"}},
		{name: "rotation: old key still decrypts", encode: []string{"a"}, decode: []string{"b", "a"}},
		{name: "rotation: new key encrypts", encode: []string{"b", "a"}, decode: []string{"b"}},
		{name: "unencrypted passes through", decode: []string{"a"}},
		{name: "unknown key id", encode: []string{"a"}, decode: []string{"b"}, wantErr: `key id "a"`, isErr: ErrUnknownKey},
		{name: "tampered ciphertext", encode: []string{"a"}, decode: []string{"a"},
			tamper: func(p *commonpb.Payload) { p.Data[len(p.Data)-1] ^= 1 }, wantErr: `key "a"`, isErr: ErrDecrypt},
		{name: "relabelled key id", encode: []string{"a"}, decode: []string{"a", "b"},
			tamper: func(p *commonpb.Payload) { p.Metadata[MetadataKeyID] = []byte("b") }, wantErr: `key "b"`, isErr: ErrDecrypt},
		{name: "no key id", encode: []string{"a"}, decode: []string{"a"},
			tamper: func(p *commonpb.Payload) { delete(p.Metadata, MetadataKeyID) }, wantErr: MetadataKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plain
			if tt.encode != nil {
				p = encodeWith(t, ring(t, tt.encode...))
				if got := string(p.Metadata[converter.MetadataEncoding]); got != EncodingEncrypted {
					t.Fatalf("encoding %q, want %q", got, EncodingEncrypted)
				}
				if got := string(p.Metadata[MetadataKeyID]); got != tt.encode[0] {
					t.Fatalf("key id %q, want %q", got, tt.encode[0])
				}
				if bytes.Contains(p.Data, []byte(secret)) || strings.Contains(p.String(), secret) {
					t.Fatal("the encrypted payload holds the plaintext")
				}
			}
			if tt.tamper != nil {
				tt.tamper(p)
			}
			out, err := New(ring(t, tt.decode...)).Decode([]*commonpb.Payload{p})
			if tt.wantErr != "" || tt.isErr != nil {
				if err == nil {
					t.Fatalf("decoded, want an error with %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || (tt.isErr != nil && !errors.Is(err, tt.isErr)) {
					t.Fatalf("error %q, want one with %q (%v)", err, tt.wantErr, tt.isErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := converter.GetDefaultDataConverter().FromPayload(out[0], &s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s, secret) {
				t.Fatalf("decoded %q, want the secret", s)
			}
		})
	}
}

// TestSameIDOtherKey: a key file whose key under an id was changed must
// not decrypt what the old key wrote, and must say so.
func TestSameIDOtherKey(t *testing.T) {
	old, _ := NewKeys([]string{"k"}, [][]byte{key(1)})
	changed, _ := NewKeys([]string{"k"}, [][]byte{key(2)})
	p, _ := converter.GetDefaultDataConverter().ToPayload("x")
	enc, err := New(old).Encode([]*commonpb.Payload{p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(changed).Decode(enc); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("err %v, want ErrDecrypt", err)
	}
}

func TestDataConverter(t *testing.T) {
	dc := DataConverter(ring(t, "a"))
	p, err := dc.ToPayload(map[string]string{"k": "secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.String(), "secret-value") {
		t.Fatal("plaintext in the payload")
	}
	var got map[string]string
	if err := dc.FromPayload(p, &got); err != nil || got["k"] != "secret-value" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestParseKeys(t *testing.T) {
	k32 := base64.StdEncoding.EncodeToString(key(7))
	k16 := base64.StdEncoding.EncodeToString(key(7)[:16])
	tests := []struct {
		name, file string
		wantIDs    []string
		wantErr    string
	}{
		{name: "two keys, comments", file: "# current first\nnew=" + k32 + "\n\nold = " + k32 + "\n", wantIDs: []string{"new", "old"}},
		{name: "empty", file: "# nothing\n", wantErr: "no keys"},
		{name: "bare key", file: "new=" + k32 + "\n" + k32 + "\n", wantErr: "line 2: the key is 0 bytes"},
		{name: "bad base64", file: "a=" + k32 + "\n\nb=@@" + k32[2:] + "\n", wantErr: "line 3: the key is not valid standard base64"},
		{name: "short key", file: "a=" + k16 + "\n", wantErr: "line 1: the key is 16 bytes, not 32"},
		{name: "no equals", file: "just-words\n", wantErr: "line 1: no '='"},
		{name: "bad id", file: "a b=" + k32 + "\n", wantErr: "line 1: the key id"},
		{name: "duplicate id", file: "a=" + k32 + "\na=" + k32 + "\n", wantErr: "line 2: the key id is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := LoadKeys(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				for _, secret := range []string{strings.TrimRight(k32, "="), strings.TrimRight(k16, "="), k32[2:20]} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("the error shows key material: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(k.IDs(), ","); got != strings.Join(tt.wantIDs, ",") || k.Current() != tt.wantIDs[0] {
				t.Fatalf("ids %s current %s, want %v", got, k.Current(), tt.wantIDs)
			}
		})
	}
}
