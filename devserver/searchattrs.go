package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// SearchAttributes are the custom search attributes Longrun sessions set.
// SQL visibility (SQLite and PostgreSQL alike) allows 10 Keyword and 3 each
// of Int, Bool, Double, Datetime, KeywordList and Text per namespace, so
// this list is spent with care: the docker-compose setup registers the
// same set.
//
// The names are workflows' public keys (PhaseKey and the rest), written
// out here because this module cannot import the main one: a require of
// github.com/longrun/longrun (with a replace to ..) puts the main module's
// requirements into this build list, and `go mod tidy` then builds the
// server with go.temporal.io/api v1.64.3 instead of v1.63.5, the SDK it
// embeds for its system workers at v1.51.0 instead of v1.44.0, and
// nexus-rpc/sdk-go, prometheus and the AWS SDK moved too: a server no
// one released or tested. composetest's TestSameAttributesAsDevServer
// reads this map and the temporal.NewSearchAttributeKey* calls in
// workflows/ and fails when they differ by a name or a type.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	"LongrunPhase":            enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LongrunModel":            enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LongrunWorkspace":        enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"LongrunPendingApprovals": enumspb.INDEXED_VALUE_TYPE_INT,
	"LongrunTurns":            enumspb.INDEXED_VALUE_TYPE_INT,
	"LongrunTokens":           enumspb.INDEXED_VALUE_TYPE_INT,
}

// registerSearchAttributes adds the attributes the namespace lacks. It retries
// while the freshly started frontend is still warming up.
func registerSearchAttributes(ctx context.Context, addr, namespace string, want map[string]enumspb.IndexedValueType) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	op := operatorservice.NewOperatorServiceClient(conn)

	var lastErr error
	for {
		lastErr = addMissing(ctx, op, namespace, want)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func addMissing(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string, want map[string]enumspb.IndexedValueType) error {
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t, ok := have.GetCustomAttributes()[n]
		if !ok {
			missing[n] = want[n]
			continue
		}
		if t != want[n] {
			return fmt.Errorf("search attribute %s exists with type %s, want %s", n, t, want[n])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	// The frontend's namespace cache refreshes every 10 s; until then an
	// upsert of a new attribute fails the workflow task. Readiness waits.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(11 * time.Second):
	}
	return nil
}
