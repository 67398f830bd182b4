package main

import (
	"cmp"
	"flag"
	"fmt"
	"net"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
)

// temporalConfig is where the worker finds Temporal, read the way the
// temporal CLI and the starter read it, so one set of settings serves all
// three: the profile in Temporal's TOML config file, then TEMPORAL_*
// variables (API key, TLS certificates, gRPC metadata), then flags.
type temporalConfig struct {
	Address    string // --address, TEMPORAL_ADDRESS
	Namespace  string // --namespace, TEMPORAL_NAMESPACE
	ConfigFile string // --config-file, TEMPORAL_CONFIG_FILE
	Profile    string // --temporal-profile, TEMPORAL_PROFILE
	// Compression is --grpc-compression, LONGRUN_GRPC_COMPRESSION: auto,
	// gzip or none.
	Compression string
	env         envconfig.EnvLookup
}

// bind defines the connection flags. The address and namespace default to
// their variables as they always have; an empty one is resolved later from
// the profile, then localhost:7233 and default.
func (c *temporalConfig) bind(fs *flag.FlagSet, getenv func(string) string, environ func() []string) {
	c.env = envLookup{getenv, environ}
	fs.StringVar(&c.Address, "address", getenv("TEMPORAL_ADDRESS"), "Temporal frontend host:port (env TEMPORAL_ADDRESS, else the profile's, else localhost:7233)")
	fs.StringVar(&c.Namespace, "namespace", getenv("TEMPORAL_NAMESPACE"), "Temporal namespace (env TEMPORAL_NAMESPACE, else the profile's, else default)")
	fs.StringVar(&c.ConfigFile, "config-file", getenv("TEMPORAL_CONFIG_FILE"), "Temporal client config file, TOML (env TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml)")
	fs.StringVar(&c.Profile, "temporal-profile", getenv("TEMPORAL_PROFILE"), "profile in the Temporal config file (env TEMPORAL_PROFILE, default default)")
	fs.StringVar(&c.Compression, "grpc-compression", cmp.Or(getenv("LONGRUN_GRPC_COMPRESSION"), "auto"), "gzip the requests to Temporal: auto (none to a loopback address, gzip elsewhere), gzip or none (env LONGRUN_GRPC_COMPRESSION)")
}

// compression is the gRPC compression for addr: gzip saves bandwidth to a
// server across a network, and costs both ends CPU for nothing on
// loopback (docs/BENCHMARKS.md: ~2.5 ms of a 20 ms turn on the embedded
// server).
func compression(mode, addr string) (client.GrpcCompression, error) {
	switch mode {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "", "auto":
		if isLoopback(addr) {
			return &client.GrpcCompressionNone{}, nil
		}
		return &client.GrpcCompressionGzip{}, nil
	}
	return nil, fmt.Errorf("--grpc-compression %q: want auto, gzip or none", mode)
}

// isLoopback reports whether host:port names this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientOptions loads the profile, applies the environment and the flags,
// and fills in the defaults.
func (c *temporalConfig) clientOptions() (client.Options, error) {
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
		ConfigFilePath:    c.ConfigFile,
		ConfigFileProfile: c.Profile,
		EnvLookup:         c.env,
	})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client config: %w", err)
	}
	prof.Address = cmp.Or(c.Address, prof.Address, client.DefaultHostPort)
	prof.Namespace = cmp.Or(c.Namespace, prof.Namespace, client.DefaultNamespace)
	// No remote codec: a worker encodes payloads itself or not at all.
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client config: %w", err)
	}
	if opts.ConnectionOptions.GrpcCompression, err = compression(c.Compression, opts.HostPort); err != nil {
		return client.Options{}, err
	}
	return opts, nil
}

// envLookup gives envconfig the worker's environment; an empty variable
// counts as unset, as it always has here.
type envLookup struct {
	getenv  func(string) string
	environ func() []string
}

func (e envLookup) LookupEnv(k string) (string, bool) {
	v := e.getenv(k)
	return v, v != ""
}

func (e envLookup) Environ() []string {
	if e.environ == nil {
		return nil
	}
	return e.environ()
}
