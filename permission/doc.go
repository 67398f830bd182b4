// Package permission decides whether a tool call may run: allow, ask a
// person, or deny.
//
// The package is pure and deterministic: no I/O, no clock, no environment,
// and no map iteration that reaches a result. The session workflow holds an
// Engine and calls it while replaying, so it must decide the same way every
// time. The rule files are read elsewhere (an activity) and passed in.
//
// # Rules and layers
//
// A Rule is {tool, pattern, action}, OpenCode style. Tool is a wildcard over
// tool names (* any run, ? one character). Pattern narrows the rule, by the
// kind of the call's subject (Kind, which the tool's spec declares: the
// engine never decides on a tool's name). For a command (KindCommand: the
// shell tool, or any tool that declares it) it is a wildcard over each
// command of the command line, where *
// crosses spaces and slashes and a trailing " *" also matches the bare
// command ("git *" matches "git" and "git log -p"); for any other tool it is
// a path glob over the workspace-relative, cleaned path, where * and ? stay in
// one segment and ** spans any number of them ("docs/**" matches
// "docs/a/b.md"; "./docs/../secrets/k" is matched as "secrets/k"). For a
// URL (KindURL: web_fetch) the subject is the URL's host, lower case,
// without port or trailing dot, and the pattern is a wildcard over it:
// "go.dev" matches that host only, "*.go.dev" any host under it (not go.dev
// itself). A web call with no subject (web_search) is matched by rules
// without a pattern. In every pattern a backslash before *, ? or another
// backslash makes it literal (`TestX\*` matches the text "TestX*" only);
// any other backslash is itself. A shell rule with "exact": true matches
// one whole command line, literally, instead of each command.
//
// "Approve and remember" without a pattern typed by the person remembers
// exactly the call (Remembered): its path or host as a literal, a shell
// call as an exact rule for its whole command line. Glob characters the
// model wrote stay literal, so a file named "**" does not become "every
// file", and "go test ./..." never allows "go test ./... -exec x".
//
// Layers are consulted in this order, and a later one wins: defaults (built
// in), the caller's layers (normally worker, from the worker's configuration
// directory, then workspace, from .longrun/permissions.json, then session,
// from the start options), and remembered (rules added with
// Remember when a person approves "for this session"). Within a layer the last
// matching rule wins, so "everything asks, git is allowed, git push asks" is
// written in that order.
//
// A shell command line is split with shellcmd into its commands (those run by
// sudo, env, bash -c and the like included), and every command is decided on
// its own; the strictest answer wins. An allow rule for "git *" therefore
// does not allow "git status && rm -rf build", and a deny rule for "rm *"
// catches "env /bin/rm x".
//
// # The built-in defaults
//
// A tool whose spec says it is read-only is allowed. A shell command that
// shellcmd classifies as read-only is allowed (the reason says so). Anything
// else, write, edit, apply_patch, shell and unknown tools alike, asks. A web
// tool (web_fetch, web_search) asks although it changes nothing: the URL or
// query it sends can carry workspace data to a third party. Profile auto
// does not allow it unasked either; only a rule does.
//
// # Fixed checks around the rules
//
//   - A shell command on shellcmd's hard block list is denied in every
//     profile; no rule can allow it.
//   - Profile plan denies every tool that is not read-only, and Visible hides
//     it from the model.
//   - Profile auto turns ask into allow, for shell and for paths inside the
//     workspace; a deny rule of any layer still denies, even if a later layer
//     allows the same call.
//   - Doom loop: when a tool is called with the same ArgsKey DoomLoop times in
//     a row (3 unless configured), Decide asks even where rules allow, auto
//     included. A rule for the pseudo-tool "doom_loop" whose pattern matches
//     the tool name answers it instead.
//   - Control files: a call of a tool that is not read-only naming a path in
//     .longrun/ or .git/ or an AGENTS.md (any depth, Call.Paths included)
//     asks a person in every profile, auto included, whatever the rules and
//     remembered approvals say (layer control). With approver "none" it is
//     denied, and no rule can allow it.
//   - Read-only sandbox: an allow that some command of a shell call got from
//     the read-only classification alone is marked Decision.Classified; the
//     caller runs it in the read-only sandbox, so a misclassified writer
//     fails harmlessly. Auto clears the mark: it would allow the call anyway.
//   - No sandbox (Config.NoSandbox): a shell command allowed only by the
//     classification or by auto asks instead (layer sandbox); a rule a
//     person wrote still allows.
//   - Fail-closed: with approver "none", ask becomes deny, and the reason
//     tells how to allow the call with a rule.
package permission
