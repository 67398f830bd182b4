package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// The schemas devserver sets up, as named in the server module's embedded
// schema directory (go.temporal.io/server/schema): the same files
// temporal-sql-tool applies with --schema-name, and the same ones
// deploy/setup-postgres.sh applies from the admin-tools image.
const (
	postgresSchema           = "postgresql/v12/temporal"
	postgresVisibilitySchema = "postgresql/v12/visibility"
	// postgresAdminDatabase is where CREATE DATABASE runs, as
	// temporal-sql-tool's --defaultdb.
	postgresAdminDatabase = "postgres"
	// visibilitySuffix names the visibility database after the
	// persistence one: temporal and temporal_visibility, as in Temporal's
	// compose example and Longrun's docker-compose.yml.
	visibilitySuffix = "_visibility"
)

// postgresStores reads --postgres URL into the SQL configuration of the
// persistence and the visibility databases. The URL is libpq's:
// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]; the
// path names the persistence database (default temporal) and visibility
// lives beside it in DATABASE_visibility. Query parameters go to the
// driver as they are (sslmode, sslrootcert, ...).
func postgresStores(raw string) (store, visibility *config.SQL, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password and all: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("--postgres: not a URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE): %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, nil, fmt.Errorf("--postgres %q: want postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE", redact(raw))
	}
	host := u.Hostname()
	if host == "" {
		return nil, nil, fmt.Errorf("--postgres %q: no host", redact(raw))
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "temporal"
	}
	if strings.ContainsAny(db, `/"`) {
		return nil, nil, fmt.Errorf("--postgres %q: database name %q may not hold / or \"", redact(raw), db)
	}
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[len(v)-1]
	}
	user := u.User.Username()
	password, _ := u.User.Password()
	base := config.SQL{
		PluginName:        pgplugin.PluginName,
		User:              user,
		Password:          password,
		ConnectAddr:       net.JoinHostPort(host, port),
		ConnectProtocol:   "tcp",
		ConnectAttributes: attrs,
		// The server's docker config template uses 20/20/1h. devserver
		// runs all four services in one process, each with its own pool
		// per store, so it keeps fewer idle connections.
		MaxConns:        20,
		MaxIdleConns:    4,
		MaxConnLifetime: time.Hour,
	}
	s, v := base, base
	s.DatabaseName = db
	v.DatabaseName = db + visibilitySuffix
	// The maps must not be shared: the server may fill them per store.
	v.ConnectAttributes = map[string]string{}
	for k, val := range attrs {
		v.ConnectAttributes[k] = val
	}
	return &s, &v, nil
}

// setupPostgres creates the database if it is missing, then sets up and
// updates its schema the way temporal-sql-tool does (create,
// setup-schema -v 0.0, update-schema), through the tool's own Go API and
// the schema files embedded in the server module. On a database already
// set up it only applies the versions it lacks, so a devserver upgraded
// to a newer server migrates its database on start.
func setupPostgres(cfg *config.SQL, schemaName string, logger log.Logger) error {
	// CREATE DATABASE needs the CREATEDB right; an operator may have made
	// the database and given the user no more than it. So a failure here
	// only counts if the schema setup then fails too.
	create := *cfg
	createErr := sqltool.DoCreateDatabase(&create, postgresAdminDatabase, logger)

	conn, err := sqltool.NewConnection(cfg, logger)
	if err != nil {
		return fmt.Errorf("connect to database %s: %w", cfg.DatabaseName, errors.Join(err, createErr))
	}
	defer conn.Close()
	setup := &schema.SetupConfig{InitialVersion: "0.0"}
	if err := schema.NewSetupSchemaTask(conn, setup, logger).Run(); err != nil {
		if createErr != nil {
			err = fmt.Errorf("%w (and creating the database failed: %v)", err, createErr)
		}
		// The plugin reports a failed connection as "no usable database
		// connection found"; the cause (refused, bad password) is in the
		// log line before.
		return fmt.Errorf("set up schema versioning in database %s at %s: %w", cfg.DatabaseName, cfg.ConnectAddr, err)
	}
	update := &schema.UpdateConfig{SchemaName: schemaName}
	if err := schema.NewUpdateSchemaTask(conn, update, logger).Run(); err != nil {
		return fmt.Errorf("update schema %s in %s: %w", schemaName, cfg.DatabaseName, err)
	}
	return nil
}

// describePostgres is the readiness line's db= value: the address and
// databases, never the password.
func describePostgres(store, visibility *config.SQL) string {
	return fmt.Sprintf("postgres://%s/%s+%s", store.ConnectAddr, store.DatabaseName, visibility.DatabaseName)
}

// redact hides a URL's password in error messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
