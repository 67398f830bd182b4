package codec

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestServer(t *testing.T) {
	const ui = "http://localhost:8080"
	keys := ring(t, "a")
	srv := httptest.NewServer(Handler(keys, ServerOptions{Token: "t0ken", Origins: []string{ui}}))
	defer srv.Close()

	p, _ := converter.GetDefaultDataConverter().ToPayload("hello secret")
	enc, err := New(keys).Encode([]*commonpb.Payload{p})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: enc})

	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		wantStatus int
		wantBody   string
		wantCORS   string
	}{
		{name: "decode with token", method: "POST", path: "/decode", header: map[string]string{"Authorization": "Bearer t0ken", "Origin": ui},
			wantStatus: 200, wantBody: "ImhlbGxvIHNlY3JldCI=" /* base64 of "hello secret" as JSON */, wantCORS: ui},
		{name: "no token", method: "POST", path: "/decode", wantStatus: 401},
		{name: "wrong token", method: "POST", path: "/decode", header: map[string]string{"Authorization": "Bearer nope"}, wantStatus: 401},
		{name: "token not bearer", method: "POST", path: "/decode", header: map[string]string{"Authorization": "t0ken"}, wantStatus: 401},
		{name: "preflight from the UI", method: "OPTIONS", path: "/decode",
			header:     map[string]string{"Origin": ui, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type,x-namespace"},
			wantStatus: 204, wantCORS: ui},
		{name: "preflight from elsewhere", method: "OPTIONS", path: "/decode",
			header: map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, wantStatus: 403},
		{name: "other origin gets no CORS", method: "POST", path: "/decode", header: map[string]string{"Authorization": "Bearer t0ken", "Origin": "http://evil.example"},
			wantStatus: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, got, tt.wantStatus)
			}
			if !strings.Contains(string(got), tt.wantBody) {
				t.Fatalf("body %s, want %s", got, tt.wantBody)
			}
			if cors := resp.Header.Get("Access-Control-Allow-Origin"); cors != tt.wantCORS {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", cors, tt.wantCORS)
			}
			if tt.method == "OPTIONS" && tt.wantStatus == 204 && !strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "authorization") {
				t.Fatalf("preflight does not allow the Authorization header: %v", resp.Header)
			}
		})
	}
}

// TestServerRemoteCodec: the SDK's own remote codec client (what the
// temporal CLI's --codec-endpoint uses) round-trips through the server.
func TestServerRemoteCodec(t *testing.T) {
	keys := ring(t, "a")
	srv := httptest.NewServer(Handler(keys, ServerOptions{Token: "t0ken"}))
	defer srv.Close()
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
		Endpoint: srv.URL,
		ModifyRequest: func(r *http.Request) error {
			r.Header.Set("Authorization", "Bearer t0ken")
			return nil
		},
	})
	p, _ := converter.GetDefaultDataConverter().ToPayload("via http")
	enc, err := remote.Encode([]*commonpb.Payload{p})
	if err != nil {
		t.Fatal(err)
	}
	if string(enc[0].Metadata[MetadataKeyID]) != "a" {
		t.Fatalf("encoded %v", enc[0])
	}
	dec, err := New(keys).Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(dec[0], &s); err != nil || s != "via http" {
		t.Fatalf("got %q, %v", s, err)
	}
}
