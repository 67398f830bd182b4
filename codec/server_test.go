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

// TestServerWithoutTokenRefusesOtherOrigins: a server that asks no token
// answers a browser only for the origins it was given (issue 28, finding
// 5: a page that rebinds its own name to 127.0.0.1 decrypted history).
// Clients that are not browsers send no Origin and are served.
func TestServerWithoutTokenRefusesOtherOrigins(t *testing.T) {
	t.Parallel()
	const ui = "http://localhost:8233"
	keys := ring(t, "a")
	srv := httptest.NewServer(Handler(keys, ServerOptions{Origins: []string{ui}}))
	defer srv.Close()
	body := encodedBody(t, keys)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{ui, 200},
		{"http://rebind.test:8081", 403},
		{"http://localhost:3000", 403},
		{"null", 403},
	} {
		for _, method := range []string{"POST", "OPTIONS"} {
			req, _ := http.NewRequest(method, srv.URL+"/decode", strings.NewReader(body))
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := tc.want
			if method == "OPTIONS" && want == 200 {
				want = 204
				if tc.origin == "" {
					want = 403 // a preflight names its origin
				}
			}
			if resp.StatusCode != want {
				t.Fatalf("%s from %q: %d %s, want %d", method, tc.origin, resp.StatusCode, got, want)
			}
			if want == 403 && method == "POST" && !strings.Contains(string(got), "--origin") {
				t.Fatalf("refusal does not say how to allow an origin: %s", got)
			}
		}
	}
}

// TestServerCapsTheBody: a body over the cap is refused with 413 and a
// message, whether its length is declared or it is streamed (issue 28,
// finding 5: a 150 MB body was accepted).
func TestServerCapsTheBody(t *testing.T) {
	t.Parallel()
	keys := ring(t, "a")
	body := encodedBody(t, keys)
	srv := httptest.NewServer(Handler(keys, ServerOptions{Token: "t", MaxBody: int64(len(body))}))
	defer srv.Close()
	post := func(r io.Reader, length int64) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/decode", r)
		req.ContentLength = length
		req.Header.Set("Authorization", "Bearer t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(got)
	}
	if st, got := post(strings.NewReader(body), int64(len(body))); st != 200 {
		t.Fatalf("a body at the cap: %d %s", st, got)
	}
	big := body + strings.Repeat(" ", 10)
	for _, length := range []int64{int64(len(big)), -1 /* chunked: no declared length */} {
		st, got := post(io.MultiReader(strings.NewReader(big)), length)
		if st != http.StatusRequestEntityTooLarge || !strings.Contains(got, "--max-body") {
			t.Fatalf("a body over the cap (length %d): %d %s", length, st, got)
		}
	}
	// The default cap, on an unbounded stream.
	srv2 := httptest.NewServer(Handler(keys, ServerOptions{Token: "t"}))
	defer srv2.Close()
	req, _ := http.NewRequest("POST", srv2.URL+"/decode", io.LimitReader(zeros{}, DefaultMaxBody+1))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("over the default cap: %d", resp.StatusCode)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// encodedBody is a /decode request body: one payload encrypted with keys.
func encodedBody(t *testing.T, keys *Keys) string {
	t.Helper()
	p, _ := converter.GetDefaultDataConverter().ToPayload("hello secret")
	enc, err := New(keys).Encode([]*commonpb.Payload{p})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	return string(b)
}
