package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// progName is how usage text and hints name this binary: longrun, the name
// make install gives it, so the hints can be pasted as they are. main keeps
// another name that starts with longrun (longrun-dev, say); a build under
// its directory's name (.longrun-bin/starter) still says longrun.
var progName = "longrun"

// Exit codes. A session that ends in any way but "completed" is a failure for
// scripts, so it shares code 1 with errors.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// config is what every subcommand accepts: where Temporal is and how to print.
// Address and Namespace hold a flag or the environment until connect
// resolves them with the Temporal client profile; then they are what is
// dialled, for messages and printed commands.
type config struct {
	Address    string
	Namespace  string
	TaskQueue  string
	ConfigFile string // Temporal's client config file (TOML); empty: TEMPORAL_CONFIG_FILE or the default path
	Profile    string // profile in that file; empty: TEMPORAL_PROFILE or "default"
	JSON       bool
	// EncryptionKeys is the key file (--encryption-keys,
	// LONGRUN_ENCRYPTION_KEYS) the worker encrypts payloads with; the
	// CLI then encrypts what it sends and decrypts what it reads.
	EncryptionKeys string
	// keys is EncryptionKeys loaded, set by loadKeys.
	keys *codec.Keys
	// Transcript is the workers' transcript store (--transcript,
	// LONGRUN_TRANSCRIPT_DIR): a session restored on a worker with no
	// checkpoint remote leaves its branch there as a bundle.
	Transcript string
	// client is the resolved Temporal client profile (file, then
	// environment, then flags), set by connect.
	client *envconfig.ClientConfigProfile
}

// app runs one invocation. dial is a field so tests can run every command
// against a fake client without a server.
type app struct {
	stdin          io.Reader // answers to watch's approval prompt
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string // for TEMPORAL_GRPC_META_*; nil in tests
	dial           func(ctx context.Context, cfg config) (sessionClient, error)
	cfg            config
	// pollInterval is how often watch polls; zero means defaultPollInterval.
	pollInterval time.Duration
	// isTerminal replaces the check that stdin or stdout is a terminal;
	// nil asks the operating system.
	isTerminal func(any) bool
	// ui is how watch draws and whether it prompts, set by resolveUI.
	ui watchUI
	// answers reads stdin for the approval prompt, made on first use so a
	// watch that never asks leaves stdin alone.
	answers lineReader
}

func (a *app) interval() time.Duration {
	if a.pollInterval > 0 {
		return a.pollInterval
	}
	return defaultPollInterval
}

// run is the whole CLI: args excludes the program name. It returns the exit
// code rather than exiting so tests can call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, environ: os.Environ, dial: dialTemporal}
	return a.run(ctx, args)
}

// command is one subcommand: its synopsis for usage, and what it does with
// the arguments left after the global flags.
type command struct {
	name     string
	synopsis string
	summary  string
	run      func(a *app, ctx context.Context, fs *flag.FlagSet, args []string) error
}

// commands is the explicit list of subcommands, in the order usage shows them.
func commands() []command {
	return []command{
		{"start", "start [--profile P] [--allow TOOL:PATTERN] [--model M] [--system S] [--max-turns N] [--workdir DIR] [--base REF | --in-place] [--idle-timeout D|forever] [--local-reads] [--local-model] [--token-budget N] [--cost-budget USD] [--approval person|guardian|none] [--approval-timeout D] [--worker-lost-after D] [--id ID] [--wait [--no-interactive] [--no-color]] PROMPT...", "start a session and print its id", (*app).cmdStart},
		{"chat", "chat [SESSION] [start's session flags] [--id ID] [--no-color]", "talk to a session full-screen: stream its reply, approve inline, send messages, Esc interrupts, Ctrl-D detaches; no SESSION: the first message starts one here", (*app).cmdChat},
		{"send", "send SESSION TEXT...", "send the session a user message", (*app).cmdSend},
		{"approve", "approve SESSION [CALL_ID...] [--all] [--feedback F]", "approve pending tool calls", (*app).cmdApprove},
		{"deny", "deny SESSION [CALL_ID...] [--all] --feedback F", "deny pending tool calls, telling the model why", (*app).cmdDeny},
		{"pending", "pending SESSION | pending --all", "list tool calls waiting for approval", (*app).cmdPending},
		{"status", "status SESSION", "show phase, turn, usage and last error", (*app).cmdStatus},
		{"conversation", "conversation SESSION", "print the conversation so far", (*app).cmdConversation},
		{"watch", "watch SESSION [--interactive|--no-interactive] [--no-color]", "follow a session until it ends; on a terminal, approve or deny as calls wait", (*app).cmdWatch},
		{"events", "events SESSION [--after N] [--follow] [--sub-agents]", "print a session's event stream: phases, turns, its text, each call proposed, decided, started and finished; --follow until it ends", (*app).cmdEvents},
		{"interrupt", "interrupt SESSION", "stop the current turn; unfinished calls get interrupted results", (*app).cmdInterrupt},
		{"cancel", "cancel SESSION", "cancel a session (pending calls get cancelled results)", (*app).cmdCancel},
		{"result", "result SESSION", "wait for a session to end and print its result", (*app).cmdResult},
		{"turns", "turns SESSION", "list the turns a session can be rewound to or forked from, with their checkpoints", (*app).cmdTurns},
		{"fork", "fork SESSION --at TURN [--id ID] [PROMPT...]", "start a new session from a turn of another: its conversation up to there, its files as that turn's checkpoint", (*app).cmdFork},
		{"rewind", "rewind SESSION --to TURN [MESSAGE...]", "take a waiting session back to a turn, files included (later turns stay in its history)", (*app).cmdRewind},
		{"diff", "diff SESSION", "print what a session changed in its own checkout (its branch and what it has not committed) against its base", (*app).cmdDiff},
		{"apply", "apply SESSION [--to DIR] [--include-control PATH]", "apply a session's changes to your checkout (git apply --3way); refuses, changing nothing, on a conflict or a control file (.longrun/, AGENTS.md) not named by --include-control", (*app).cmdApply},
		{"push", "push SESSION", "push an ended session's branch to the remote and open or update its pull request (LONGRUN_PUSH_REMOTE, LONGRUN_FORGE_TOKEN: see longrun-worker --push-remote)", (*app).cmdPush},
		{"discard", "discard SESSION", "remove an ended session's branch and checkout", (*app).cmdDiscard},
		{"checkouts", "checkouts [--state-dir DIR]", "list the sessions' checkouts a worker on this machine keeps, and the disk they take", (*app).cmdCheckouts},
		{"list", "list [--waiting] [--running] [--phase P] [--query Q] [--limit N] [--quiet]", "list sessions with phase, turns and pending approvals (search attributes)", (*app).cmdList},
		{"show", "show SESSION [--messages N]", "show a session: status, usage and its last messages", (*app).cmdShow},
		{"history", "history SESSION [--json]", "print the session's Temporal event history (--json: protojson, replayable)", (*app).cmdHistory},
		{"schedule", "schedule create|list|show|delete|pause|unpause|trigger [flags] [NAME]", "start sessions on a cron or interval (Temporal Schedules)", (*app).cmdSchedule},
		{"codec-server", "codec-server [--listen HOST:PORT] [--origin URL]... [--token-file F | --no-token] [--allowed-host NAME]... [--max-body BYTES]", "serve the remote codec protocol (for the Web UI and temporal --codec-endpoint) with --encryption-keys", (*app).cmdCodecServer},
		{"console", "console [--listen HOST:PORT] [--token-file F] [--trusted-proxy-header NAME] [--origin URL]... [--allowed-host NAME]...", "serve the approval inbox in a browser: waiting calls with their diffs, approve or deny, conversations live", (*app).cmdConsole},
		{"serve", "serve --repo OWNER/NAME=WORKDIR... --allow-user LOGIN... [--listen HOST:PORT] [--webhook-secret-file F] [--label L] [--allowed-host NAME]... [--max-body BYTES] [start's session flags]", "receive GitHub webhooks: a labelled issue starts a session that opens a pull request; reviews and /approve, /deny comments steer it", (*app).cmdServe},
		{"completion", "completion bash|zsh", "print a shell completion script", (*app).cmdCompletion},
	}
}

func (a *app) run(ctx context.Context, args []string) int {
	a.cfg = a.defaultConfig()
	global := flag.NewFlagSet(progName, flag.ContinueOnError)
	global.SetOutput(io.Discard)
	a.globalFlags(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.usage(a.stdout)
			return exitOK
		}
		// One line, not the usage screen: help is for who asks for it.
		fmt.Fprintf(a.stderr, "%s: %s %s help lists the commands and global flags\n", progName, hinted(flagHint(err.Error(), global), ""), progName)
		return exitUsage
	}
	rest := global.Args()
	if len(rest) == 0 {
		fmt.Fprintf(a.stderr, "%s: name a command; %s help lists them\n", progName, progName)
		return exitUsage
	}
	name := rest[0]
	if name == "help" {
		a.usage(a.stdout)
		return exitOK
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		fmt.Fprintf(a.stderr, "%s: %s %s help lists the commands\n", progName,
			hinted(fmt.Sprintf("unknown command %q", untrusted.Visible(name)), didYouMean(name, append(names, "help"))), progName)
		return exitUsage
	}

	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a.globalFlags(fs)
	err := cmd.run(a, ctx, fs, rest[1:])
	return a.exitCode(cmd, fs, err)
}

// undefinedFlag is how package flag reports a flag it does not know.
const undefinedFlag = "flag provided but not defined: -"

// flagHint turns package flag's message for an unknown flag into one that
// names the flag as it is written and the closest the FlagSet defines:
// "unknown flag --alow, did you mean \"--allow\"?". Other messages pass as
// they are.
func flagHint(msg string, fs *flag.FlagSet) string {
	name, ok := strings.CutPrefix(msg, undefinedFlag)
	if !ok {
		return msg
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return "unknown flag --" + name + didYouMean("--"+name, names)
}

// hinted ends msg and its did-you-mean hint as a sentence before the next:
// "unknown command \"stauts\", did you mean \"status\"?" or "... x;".
func hinted(msg, hint string) string {
	msg += hint
	if strings.HasSuffix(msg, "?") {
		return msg
	}
	return msg + ";"
}

// exitCode reports err the way its kind asks: usage errors show the
// command's usage, silent exits only set the code.
func (a *app) exitCode(cmd *command, fs *flag.FlagSet, err error) int {
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		a.commandUsage(a.stdout, cmd, fs)
		return exitOK
	// Messages may quote the model's ids and arguments (and the session's
	// refusals do): they reach the terminal through the renderer too.
	case errors.As(err, &ue):
		// The reason, the synopsis and where the rest is: the flags and
		// examples are for who asks (-h).
		fmt.Fprintf(a.stderr, "%s %s: %s\n", progName, cmd.name, untrusted.Visible(flagHint(ue.msg, fs)))
		fmt.Fprintf(a.stderr, "Usage: %s %s\n(%s %s -h shows its flags and examples)\n", progName, cmd.synopsis, progName, cmd.name)
		return exitUsage
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(a.stderr, untrusted.Visible(ee.msg))
		}
		return ee.code
	default:
		fmt.Fprintf(a.stderr, "%s %s: %s\n", progName, cmd.name, untrusted.Visible(err.Error()))
		return exitFailure
	}
}

// defaultConfig reads the environment the temporal CLI and the worker read,
// so one exported TEMPORAL_ADDRESS serves all three. The rest of Temporal's
// client settings (API key, TLS, profiles) are read at connect.
func (a *app) defaultConfig() config {
	cfg := config{
		Address:    a.getenv("TEMPORAL_ADDRESS"),
		Namespace:  a.getenv("TEMPORAL_NAMESPACE"),
		TaskQueue:  a.getenv("LONGRUN_TASK_QUEUE"),
		ConfigFile: a.getenv("TEMPORAL_CONFIG_FILE"),
		Profile:    a.getenv("TEMPORAL_PROFILE"),

		EncryptionKeys: a.getenv(codec.EnvKeysFile),
		Transcript:     a.getenv("LONGRUN_TRANSCRIPT_DIR"),
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.DefaultTaskQueue
	}
	return cfg
}

// globalFlags binds the global flags to a.cfg. Each FlagSet defaults them to
// the current values, so flags given before the subcommand survive being
// defined again on the subcommand's set.
func (a *app) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.cfg.Address, "address", a.cfg.Address, "Temporal frontend host:port (env TEMPORAL_ADDRESS, else the profile's, else localhost:7233)")
	fs.StringVar(&a.cfg.Namespace, "namespace", a.cfg.Namespace, "Temporal namespace (env TEMPORAL_NAMESPACE, else the profile's, else default)")
	fs.StringVar(&a.cfg.ConfigFile, "config-file", a.cfg.ConfigFile, "Temporal client config file, TOML (env TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml)")
	fs.StringVar(&a.cfg.Profile, "temporal-profile", a.cfg.Profile, "profile in the Temporal config file (env TEMPORAL_PROFILE, default default)")
	fs.StringVar(&a.cfg.TaskQueue, "task-queue", a.cfg.TaskQueue, "task queue the worker polls (env LONGRUN_TASK_QUEUE)")
	fs.BoolVar(&a.cfg.JSON, "json", a.cfg.JSON, "print JSON instead of text")
	fs.StringVar(&a.cfg.EncryptionKeys, "encryption-keys", a.cfg.EncryptionKeys, "the worker's key file (KEYID=BASE64 lines): encrypt what is sent, decrypt what is read (env "+codec.EnvKeysFile+")")
	fs.StringVar(&a.cfg.Transcript, "transcript", a.cfg.Transcript, "the workers' transcript store (a directory or s3:// URL, as the worker's --transcript): diff, apply and discard fetch from it the branch of a session restored on a worker with no checkpoint remote (env LONGRUN_TRANSCRIPT_DIR)")
}

// parseArgs parses flags anywhere among the positional arguments, so
// `approve s1 --all` works as well as `approve --all s1`. Everything after
// "--" is positional, for text that starts with a dash.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError is a mistake in how the command was called: exit 2 with usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError ends the command with a code, after the command has already said
// what happened (a watched session that failed, an interrupted watch).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

func (a *app) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [global flags] COMMAND [flags] ARGS\n\nCommands:\n", progName)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Global flags (before or after the command):
  --address HOST:PORT      Temporal frontend (env TEMPORAL_ADDRESS, default localhost:7233)
  --namespace NS           namespace (env TEMPORAL_NAMESPACE, default default)
  --task-queue Q           worker task queue (env LONGRUN_TASK_QUEUE, default %s)
  --config-file FILE       Temporal client config (env TEMPORAL_CONFIG_FILE)
  --temporal-profile NAME  profile in it (env TEMPORAL_PROFILE, default default)
  --json                   print JSON
  --encryption-keys FILE   the worker's payload keys (env LONGRUN_ENCRYPTION_KEYS)
Connection settings follow the temporal CLI: flags, then TEMPORAL_* variables
(TEMPORAL_API_KEY sends a bearer token over TLS; TEMPORAL_TLS, TEMPORAL_TLS_*
certificates), then the profile.

Run '%s COMMAND -h' for a command's flags. Put "--" before text that starts with "-".
`, workflows.DefaultTaskQueue, progName)
}

func (a *app) commandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s.\n", progName, cmd.synopsis, cmd.summary)
	if ex := examples[cmd.name]; len(ex) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range ex {
			// A line that is a shell command of its own (source <(longrun
			// completion bash)) is not a longrun command line.
			if strings.HasPrefix(e, "source ") {
				fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(e, "longrun", progName))
				continue
			}
			fmt.Fprintf(w, "  %s %s\n", progName, e)
		}
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// printJSON writes v indented, for people piping to jq and for scripts alike.
func (a *app) printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	// The same value, with bidi, zero-width and C1 characters escaped:
	// JSON printed on a terminal is read too.
	_, err := a.stdout.Write(untrusted.JSON(b.Bytes()))
	return err
}
