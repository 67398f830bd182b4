package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// postgresURLEnv names a PostgreSQL server (postgres://USER:PASSWORD@HOST:PORT,
// no database) that every devserver the tests start keeps its state in,
// instead of SQLite: the shared one and each test's own (the server
// restart). scripts/with-postgres.sh sets it for a throwaway cluster;
// `make test-postgres` runs the PostgreSQL set with it.
const postgresURLEnv = "LONGRUN_POSTGRES_URL"

// devserverDB is what the shared devserver's readiness line says it keeps
// its state in: "memory", or postgres://HOST:PORT/DB+DB_visibility.
var devserverDB string

// devserverStoreArgs are the devserver flags for where it keeps its state.
// db is an SQLite file, or "" for a throwaway store. With
// LONGRUN_POSTGRES_URL set each gets a PostgreSQL database of its own
// (devserver creates it): "" a fresh one, a file name one derived from
// it, so a devserver restarted with the same name finds its sessions.
func devserverStoreArgs(db string) ([]string, error) {
	base := os.Getenv(postgresURLEnv)
	if base == "" {
		if db == "" {
			return []string{"--memory"}, nil
		}
		return []string{"--db", db}, nil
	}
	name := "longrun_e2e_" + randHex(6)
	if db != "" {
		sum := sha256.Sum256([]byte(db))
		name = "longrun_e2e_" + hex.EncodeToString(sum[:6])
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL", postgresURLEnv) // the error would repeat the password
	}
	u.Path = "/" + name
	return []string{"--postgres", u.String()}, nil
}

// TestDevserverOnPostgres says which store this run's Temporal server
// uses: it runs only under LONGRUN_POSTGRES_URL and fails unless the
// shared devserver reports PostgreSQL, so `make test-postgres` cannot
// pass having quietly run on SQLite.
func TestDevserverOnPostgres(t *testing.T) {
	t.Parallel()
	if os.Getenv(postgresURLEnv) == "" {
		t.Skipf("SKIPPED LOUDLY: %s is not set; `make test-postgres` (part of `make test`) runs the e2e set against a throwaway PostgreSQL cluster", postgresURLEnv)
	}
	require.True(t, strings.HasPrefix(devserverDB, "postgres://"), "devserver keeps its state in %q", devserverDB)
	require.True(t, strings.HasSuffix(devserverDB, "_visibility"), "visibility in PostgreSQL too: %q", devserverDB)
	u, err := url.Parse(os.Getenv(postgresURLEnv))
	require.NoError(t, err)
	if pw, ok := u.User.Password(); ok {
		require.NotContains(t, devserverDB, pw, "the readiness line shows the database password")
	}
}

// A --postgres URL devserver cannot use stops it with a message that
// names the problem and never the password: it ends up in terminals, CI
// logs and bug reports. No PostgreSQL is needed: each case fails before
// or at the connection.
func TestDevserverPostgresErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Pw"
	cases := []struct {
		name, url, want string
	}{
		{"not a URL", "postgres://u:" + secret + "@127.0.0.1:port/db", "not a URL"},
		{"other scheme", "mysql://u:" + secret + "@127.0.0.1/db", "want postgres://"},
		{"nothing listening", "postgres://u:" + secret + "@127.0.0.1:1/db", "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(devserverPath, "--postgres", tc.url, "--port", "0", "--ui-port", "0").CombinedOutput()
			require.Error(t, err, "devserver started with %s:\n%s", tc.url, out)
			require.Contains(t, string(out), tc.want)
			require.NotContains(t, string(out), secret)
		})
	}
}
