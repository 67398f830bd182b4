package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// Options configure the embedded server.
type Options struct {
	IP     string
	Port   int
	UIPort int    // 0 = no UI
	DBFile string // "" = in memory
	// DBSync is the SQLite file's synchronous setting: "full" (a commit
	// survives a power loss) or "normal" (it survives a killed server,
	// not a crashed machine; no fsync per commit). See fileAttributes.
	DBSync string
	// Postgres, when set, is a postgres:// URL: persistence and
	// visibility live in PostgreSQL instead of DBFile (postgresStores).
	Postgres  string
	Namespace string
	LogLevel  string
	Dynamic   map[string]string // dynamic config key -> JSON value
	// AllowedHosts are the names, besides loopback ones, the Web UI
	// answers to (hostcheck): the host it is published under.
	AllowedHosts []string
}

// Server is a running Temporal server and, optionally, its Web UI.
type Server struct {
	server temporal.Server
	ui     *webUI
}

// Stop stops the UI and then the server.
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.stop()
	}
	s.server.Stop()
}

// Start builds and starts the server. The internal services listen on free
// ports; only the frontend (and the UI) use the requested ones.
func Start(o Options) (*Server, error) {
	conf, err := buildConfig(o)
	if err != nil {
		return nil, err
	}
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: o.LogLevel, Format: "json"}))
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("create authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("create claim mapper: %w", err)
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The SDK's version check would call out to the network.
		dynamicconfig.MakeKey("frontend.enableServerVersionCheck"): false,
		// One history shard reads its task queues at most 20 times a second
		// by default: every hand-off of a turn (workflow task, activity)
		// then waits up to 50 ms, 200 ms a turn (docs/BENCHMARKS.md). A
		// single-process dev server has the headroom to read at once.
		dynamicconfig.MakeKey("history.transferProcessorMaxPollRPS"):   1000,
		dynamicconfig.MakeKey("history.timerProcessorMaxPollRPS"):      1000,
		dynamicconfig.MakeKey("history.visibilityProcessorMaxPollRPS"): 1000,
		// Eager activities: an activity scheduled by a workflow task goes
		// back to the same worker in the task's response, no round trip.
		dynamicconfig.MakeKey("system.enableActivityEagerExecution"): true,
	}
	for k, v := range o.Dynamic {
		val, err := dynamicValue(v)
		if err != nil {
			return nil, fmt.Errorf("dynamic config %s: value %q is not JSON (string values need quotes): %w", k, v, err)
		}
		dyn[dynamicconfig.MakeKey(k)] = val
	}
	host := func(svc primitives.ServiceName) static.Hosts {
		return static.SingleLocalHost(net.JoinHostPort(o.IP, strconv.Itoa(conf.Services[string(svc)].RPC.GRPCPort)))
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: host(primitives.FrontendService),
			primitives.MatchingService: host(primitives.MatchingService),
			primitives.HistoryService:  host(primitives.HistoryService),
			primitives.WorkerService:   host(primitives.WorkerService),
		}),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("create server: %w", err)
	}

	var ui *webUI
	if o.UIPort != 0 {
		if ui, err = startWebUI(o); err != nil {
			return nil, err
		}
	}
	if err := srv.Start(); err != nil {
		if ui != nil {
			ui.stop()
		}
		return nil, fmt.Errorf("start server: %w", err)
	}
	return &Server{server: srv, ui: ui}, nil
}

func buildConfig(o Options) (*config.Config, error) {
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30e9
	conf.Global.Membership.BroadcastAddress = o.IP
	// One shard: a cluster's shard count is fixed when its database is
	// first set up, and a dev server needs no more.
	conf.Persistence.NumHistoryShards = 1
	if o.Postgres != "" {
		store, visibility, err := postgresConfig(o)
		if err != nil {
			return nil, err
		}
		conf.Persistence.DefaultStore = "postgres"
		conf.Persistence.VisibilityStore = "postgres-visibility"
		conf.Persistence.DataStores = map[string]config.DataStore{
			"postgres":            {SQL: store},
			"postgres-visibility": {SQL: visibility},
		}
	} else {
		sqlConf, err := sqlConfig(o)
		if err != nil {
			return nil, err
		}
		conf.Persistence.DefaultStore = "sqlite"
		conf.Persistence.VisibilityStore = "sqlite"
		conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	}

	frontend := net.JoinHostPort(o.IP, strconv.Itoa(o.Port))
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        "active",
		CurrentClusterName:       "active",
		ClusterInformation: map[string]cluster.ClusterInformation{
			"active": {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				ClusterID:              "4a1c2f0e-8d3b-4e5f-9a7c-6b2d1e0f3a91", // fixed: a dev cluster keeps one id across restarts
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range []string{"frontend", "history", "matching", "worker"} {
		var svc config.Service
		svc.RPC.BindOnIP = o.IP
		if name == "frontend" {
			svc.RPC.GRPCPort = o.Port
			// No HTTP API (HTTPPort 0): nothing of Longrun uses it, and
			// it would be an HTTP service, on a port a rebinding page can
			// scan for, that answers any Host (hostcheck guards the
			// Web UI, not the server's own listeners).
		} else {
			p, err := freePort(o.IP)
			if err != nil {
				return nil, err
			}
			svc.RPC.GRPCPort = p
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return &conf, nil
}

func sqlConfig(o Options) (*config.SQL, error) {
	conf := config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DBFile == "" {
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = strconv.Itoa(rand.IntN(9999999))
	} else {
		conf.ConnectAttributes = fileAttributes(o.DBSync)
		conf.DatabaseName = o.DBFile
		if _, err := os.Stat(o.DBFile); os.IsNotExist(err) {
			if err := sqliteschema.SetupSchema(&conf); err != nil {
				return nil, fmt.Errorf("set up schema in %s: %w", o.DBFile, err)
			}
		}
	}
	if err := createNamespace(&conf, o.Namespace); err != nil {
		return nil, err
	}
	return &conf, nil
}

// fileAttributes are the SQLite file's connection settings. The file
// keeps a write-ahead log (journal_mode=wal) with synchronous=full: a
// commit is one append and one fsync of the log, where the default
// rollback journal writes and syncs the journal, the database and the
// journal's removal. Every hand-off of a turn is a commit, so on a disk
// with slow fsync (a VM, a laptop on battery) the rollback journal made
// the server's own round trips half a turn's cost again
// (docs/BENCHMARKS.md, "The server's file"). synchronous=full, the
// default, keeps what the rollback journal promised: a committed
// transaction survives a power loss, not only a killed process; with
// --db-sync normal the log is synced only when it is folded back, so a
// crashed machine (never a killed server) may lose the last commits, and
// with them, say, a recorded tool result whose command then runs again.
// The log lives beside the file (temporal.db-wal, temporal.db-shm) and is
// folded back into it as it grows and at a clean stop (foldLog); after a
// kill, the next open replays it.
// The server's one connection (the SQLite plugin's default) stays: more
// connections would let writers meet "database is locked".
func fileAttributes(sync string) map[string]string {
	if sync == "" {
		sync = "full"
	}
	return map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": sync}
}

// foldLog folds the SQLite file's write-ahead log back into the file once
// the server has stopped, so the file alone holds every commit and a
// copy of it is a whole backup, as it was with the rollback journal. The
// server's own connection stays open until the process exits (the SQLite
// plugin keeps one for the process's life), so SQLite does not fold and
// remove the log itself: a checkpoint from a connection of ours does,
// leaving the log empty. The "sqlite" driver is the one the server's
// SQLite plugin registers.
func foldLog(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	var busy, frames, folded int
	if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &folded); err != nil {
		return err
	}
	if busy != 0 {
		return fmt.Errorf("the log is still in use (%d of %d pages folded)", folded, frames)
	}
	return nil
}

// postgresConfig sets up (or updates) both PostgreSQL databases and
// creates the namespace, as sqlConfig does for SQLite.
func postgresConfig(o Options) (store, visibility *config.SQL, err error) {
	store, visibility, err = postgresStores(o.Postgres)
	if err != nil {
		return nil, nil, err
	}
	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: o.LogLevel, Format: "json"}))
	if err := setupPostgres(store, postgresSchema, logger); err != nil {
		return nil, nil, err
	}
	if err := setupPostgres(visibility, postgresVisibilitySchema, logger); err != nil {
		return nil, nil, err
	}
	if err := createNamespace(store, o.Namespace); err != nil {
		return nil, nil, err
	}
	return store, visibility, nil
}

// createNamespace writes the namespace into the persistence database
// before the server starts, with the search attributes mapped to their
// visibility columns, so they are usable the moment the server is ready;
// an existing namespace is left alone, and gains attributes added in later
// versions through the operator API after start (registerSearchAttributes).
// The server module's helper is named for SQLite but writes through
// whichever SQL plugin the configuration names, and SQL visibility has the
// same custom columns in SQLite and PostgreSQL.
func createNamespace(conf *config.SQL, namespace string) error {
	ns, err := sqliteschema.NewNamespaceConfig("active", namespace, false, SearchAttributes)
	if err != nil {
		return fmt.Errorf("namespace config: %w", err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	return nil
}

// dynamicValue decodes a --dynamic-config-value. Whole numbers become int:
// the server's integer settings take only integer types and silently keep
// their default when handed the float64 that plain JSON decoding gives.
func dynamicValue(v string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return nil, err
	}
	if n, ok := val.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return int(i), nil
		}
		f, err := n.Float64()
		return f, err
	}
	return val, nil
}
