// Command devserver runs a complete Temporal server (frontend, history,
// matching, worker services) on SQLite, with the Temporal Web UI, in one
// process, the way `temporal server start-dev` does. With --postgres URL
// the same server keeps its state in PostgreSQL instead: devserver creates
// the persistence and visibility databases if they are missing and sets up
// or updates their schemas with the server's own schema tool, so it starts
// on an empty database and restarts on its own.
//
// It is its own Go module because server v1.32 pins go.temporal.io/api
// v1.63.x while the SDK the rest of Longrun uses needs v1.64; one build list
// cannot hold both.
//
// On start it registers Longrun's custom search attributes (idempotently, so
// a database from an older version gains the new ones) and prints exactly one
// readiness line:
//
//	devserver ready: temporal=127.0.0.1:7233 ui=http://127.0.0.1:8233 namespace=default db=.longrun/temporal.db
//
// Tests and scripts wait for that line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("devserver", flag.ContinueOnError)
	var o Options
	fs.StringVar(&o.IP, "ip", "127.0.0.1", "IPv4 address to bind the frontend and UI to")
	fs.IntVar(&o.Port, "port", 7233, "frontend gRPC port (0 = pick a free port)")
	fs.IntVar(&o.UIPort, "ui-port", 8233, "Web UI port (0 = no UI)")
	fs.StringVar(&o.DBFile, "db", filepath.Join(".longrun", "temporal.db"), "SQLite file holding all server state; survives restarts")
	fs.StringVar(&o.DBSync, "db-sync", "full", "when the SQLite file reaches the disk: full (every commit survives a power loss) or normal (faster; a killed server loses nothing, a crashed machine may lose the last commits)")
	var memory bool
	fs.BoolVar(&memory, "memory", false, "keep state in memory only (lost on exit); overrides --db")
	fs.StringVar(&o.Postgres, "postgres", "", "keep state in PostgreSQL instead of SQLite: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]; visibility goes to DATABASE_visibility; both are created and migrated on start")
	fs.StringVar(&o.Namespace, "namespace", "default", "namespace to create")
	fs.StringVar(&o.LogLevel, "log-level", "warn", "server log level: debug, info, warn, error")
	var allowed hostList
	fs.Var(&allowed, "allowed-host", "a host name the Web UI answers to besides localhost and loopback addresses, as browsers send it in Host (e.g. temporal.example.com; repeatable): any other is refused, so DNS rebinding cannot reach it")
	var dyn dynFlags
	fs.Var(&dyn, "dynamic-config-value", "dynamic config KEY=JSON_VALUE (repeatable), e.g. limit.historyCount.suggestContinueAsNew=40")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Dynamic = dyn
	o.AllowedHosts = allowed
	if o.Port == 0 {
		p, err := freePort(o.IP)
		if err != nil {
			return err
		}
		o.Port = p
	}
	if o.DBSync != "full" && o.DBSync != "normal" {
		return fmt.Errorf("--db-sync %q: want full or normal", o.DBSync)
	}
	if memory && o.Postgres != "" {
		return errors.New("--memory and --postgres: choose one")
	}
	if memory || o.Postgres != "" {
		o.DBFile = ""
	} else if err := os.MkdirAll(filepath.Dir(o.DBFile), 0o755); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}

	srv, err := Start(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	err = registerSearchAttributes(ctx, net.JoinHostPort(o.IP, strconv.Itoa(o.Port)), o.Namespace, SearchAttributes)
	cancel()
	if err != nil {
		srv.Stop()
		return fmt.Errorf("register search attributes: %w", err)
	}

	ui := "disabled"
	if o.UIPort != 0 {
		ui = fmt.Sprintf("http://%s", net.JoinHostPort(o.IP, strconv.Itoa(o.UIPort)))
	}
	db := o.DBFile
	switch {
	case o.Postgres != "":
		store, visibility, _ := postgresStores(o.Postgres) // parsed once already by Start
		db = describePostgres(store, visibility)
	case db == "":
		db = "memory"
	}
	fmt.Printf("devserver ready: temporal=%s ui=%s namespace=%s db=%s\n",
		net.JoinHostPort(o.IP, strconv.Itoa(o.Port)), ui, o.Namespace, db)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	fmt.Println("devserver stopping")
	srv.Stop()
	if o.DBFile != "" {
		if err := foldLog(o.DBFile); err != nil {
			fmt.Fprintf(os.Stderr, "devserver: fold the write-ahead log into %s: %v (the next start replays it)\n", o.DBFile, err)
		}
	}
	return nil
}

func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dynFlags collects repeated --dynamic-config-value flags.
type dynFlags map[string]string

func (d *dynFlags) String() string { return fmt.Sprint(map[string]string(*d)) }

func (d *dynFlags) Set(v string) error {
	for i := 0; i < len(v); i++ {
		if v[i] == '=' {
			if *d == nil {
				*d = map[string]string{}
			}
			(*d)[v[:i]] = v[i+1:]
			return nil
		}
	}
	return errors.New("want KEY=JSON_VALUE")
}

// hostList collects repeated --allowed-host flags.
type hostList []string

func (l *hostList) String() string { return fmt.Sprint([]string(*l)) }

func (l *hostList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
