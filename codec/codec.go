package codec

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload. The whole original payload (its
// metadata and data) is the plaintext, so even its encoding is hidden.
const (
	// EncodingEncrypted is the payload's "encoding" metadata.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID names the key the payload was encrypted with.
	MetadataKeyID = "encryption-key-id"
)

// Codec is a converter.PayloadCodec that encrypts every payload with the
// ring's current key and decrypts under any key of the ring. Payloads that
// are not encrypted pass through Decode unchanged, so histories written
// before encryption was turned on stay readable.
type Codec struct {
	keys *Keys
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec for keys.
func New(keys *Keys) *Codec { return &Codec{keys: keys} }

// DataConverter is the SDK's default converter with payloads encrypted by
// keys: what the worker and the CLI put in client.Options.
func DataConverter(keys *Keys) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(keys))
}

// Encode encrypts each payload. The key id is authenticated with the
// ciphertext, so relabelling a payload with another id fails to decrypt.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		id, sealed, err := c.keys.Seal(plain, []byte(c.keys.Current()))
		if err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:              []byte(id),
			},
			Data: sealed,
		}
	}
	return out, nil
}

// Decode decrypts each encrypted payload; others pass through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		if id == "" {
			return nil, fmt.Errorf("decrypt payload: %s payload without %s metadata", EncodingEncrypted, MetadataKeyID)
		}
		plain, err := c.keys.Open(id, p.GetData(), []byte(id))
		if err != nil {
			return nil, fmt.Errorf("decrypt payload: %w", err)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, fmt.Errorf("decrypt payload with key %q: not a payload: %w", id, err)
		}
		out[i] = &orig
	}
	return out, nil
}
