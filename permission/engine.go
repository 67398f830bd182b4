package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longrun/longrun/shellcmd"
)

// Config says how an Engine decides.
type Config struct {
	// Profile is build (the default), plan or auto.
	Profile string `json:"profile,omitempty"`
	// Layers are the caller's rule layers in increasing precedence, usually
	// workspace then session. The built-in defaults come before them and the
	// remembered layer after them.
	Layers []Layer `json:"layers,omitempty"`
	// Approver is person (the default), guardian or none. With none, every ask
	// decision becomes deny.
	Approver string `json:"approver,omitempty"`
	// DoomLoop is how many identical calls in a row make the engine ask;
	// 0 means 3, a negative value turns the check off.
	DoomLoop int `json:"doom_loop,omitempty"`
	// NoSandbox says the worker has no working shell sandbox: then no
	// shell command runs on the read-only classification or the auto
	// profile alone, it asks (a rule a person wrote still allows).
	NoSandbox bool `json:"no_sandbox,omitempty"`
}

// Call is one tool call as the engine sees it.
type Call struct {
	// Tool is the tool's name. The engine matches rules on it and names
	// it in reasons; it decides on Kind, never on the name.
	Tool string `json:"tool"`
	// Kind is what Subject is (tools.Spec.SubjectKind): a command, a
	// path, a URL's host, or nothing. Always written, so a call recorded
	// without it is known to be older (UnmarshalJSON).
	Kind Kind `json:"kind"`
	// ReadOnly comes from the tool's spec: the tool changes nothing.
	ReadOnly bool `json:"read_only,omitempty"`
	// Subject is the command line of a command call, the path (relative
	// to the workspace) of a path call, the host of a URL call, or empty.
	Subject string `json:"subject,omitempty"`
	// ArgsKey is the call's arguments in a canonical form, for the doom-loop
	// check; an empty key is never counted as a repeat.
	ArgsKey string `json:"args_key,omitempty"`
	// ShellReadOnly marks a command call read-only. The engine also runs
	// shellcmd on the command itself, so callers may leave it false.
	ShellReadOnly bool `json:"shell_read_only,omitempty"`
	// Paths are the paths the call reads or changes, as the tool reports
	// them (tools.Spec.CallPaths), besides Subject: apply_patch names several.
	// A call that may change a control file among them asks a person.
	Paths []string `json:"paths,omitempty"`
	// Web marks a call that reaches the web from the worker (web_fetch,
	// web_search; tools.Spec.Web). Its Subject, when it has one, is a
	// URL's host (KindURL), which rule patterns match as a wildcard
	// ("*.go.dev"). It asks by default
	// although it changes nothing: a URL or a query can carry workspace
	// data to a third party. Auto does not allow it unasked either: the
	// web is not the workspace.
	Web bool `json:"web,omitempty"`
}

// Decision is the engine's answer for one call.
type Decision struct {
	Action Action `json:"action"`
	// Layer is the layer whose rule decided, or one of the engine's own
	// layer names (defaults, hardblock, profile, doom_loop).
	Layer string `json:"layer"`
	// Rule is the rule that decided; nil when built-in logic did.
	Rule *Rule `json:"rule,omitempty"`
	// Reason says why, for the person approving and for the model.
	Reason string `json:"reason"`
	// Classified is set on an allow when some command of a shell call was
	// allowed only by the built-in read-only classification, not by a
	// rule a person wrote nor by the auto profile. Such a call must run
	// in the read-only sandbox: if the classifier misjudged a command,
	// it fails there harmlessly.
	Classified bool `json:"classified,omitempty"`
}

// Engine decides tool calls. It is pure and deterministic, so a workflow can
// hold one in its state; it is not safe for concurrent use.
type Engine struct {
	profile    string
	approver   string
	noSandbox  bool
	doomLoop   int
	layers     []Layer // the caller's layers, then remembered last
	remembered int     // index of the remembered layer in layers
	history    map[string][]string
}

// New checks cfg and builds an Engine.
func New(cfg Config) (*Engine, error) {
	e := &Engine{profile: cfg.Profile, approver: cfg.Approver, doomLoop: cfg.DoomLoop, noSandbox: cfg.NoSandbox, history: map[string][]string{}}
	switch e.profile {
	case "":
		e.profile = ProfileBuild
	case ProfileBuild, ProfilePlan, ProfileAuto:
	default:
		return nil, fmt.Errorf("profile %q: %w", cfg.Profile, ErrBadProfile)
	}
	switch e.approver {
	case "":
		e.approver = ApproverPerson
	case ApproverPerson, ApproverNone, ApproverGuardian:
	default:
		return nil, fmt.Errorf("approver %q: %w", cfg.Approver, ErrBadApprover)
	}
	switch {
	case e.doomLoop == 0:
		e.doomLoop = 3
	case e.doomLoop == 1:
		return nil, fmt.Errorf("doom loop %d: %w", cfg.DoomLoop, ErrBadDoomLoop)
	}
	seen := map[string]bool{}
	for _, l := range cfg.Layers {
		switch l.Name {
		case "":
			return nil, fmt.Errorf("layer without a name: %w", ErrBadLayer)
		case LayerDefaults, LayerRemembered, LayerHardBlock, LayerProfile, LayerDoomLoop, LayerControl, LayerSandbox:
			return nil, fmt.Errorf("layer %q: the name is reserved: %w", l.Name, ErrBadLayer)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("layer %q: given twice: %w", l.Name, ErrBadLayer)
		}
		seen[l.Name] = true
		for i, r := range l.Rules {
			if err := r.validate(); err != nil {
				return nil, fmt.Errorf("layer %s rule %d: %w", l.Name, i+1, err)
			}
		}
		e.layers = append(e.layers, Layer{Name: l.Name, Rules: slices.Clone(l.Rules)})
	}
	e.remembered = len(e.layers)
	e.layers = append(e.layers, Layer{Name: LayerRemembered})
	return e, nil
}

// Sandboxed reports whether the worker runs shell commands in a sandbox
// (Config.NoSandbox unset). A reviewer model's approval is worth asking
// for a shell command only then: without a sandbox, a command nobody
// approved cannot run.
func (e *Engine) Sandboxed() bool { return !e.noSandbox }

// Remember adds a rule to the remembered layer, which outranks every other
// layer; it is how "approve and remember for this session" is kept.
func (e *Engine) Remember(r Rule) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	l := &e.layers[e.remembered]
	l.Rules = append(l.Rules, r)
	return nil
}

// Decide decides one call. The order is fixed: a hard-blocked shell command
// is denied; in plan a tool that is not read-only is denied; a write to a
// control file asks, in every profile; then the rules (last match wins),
// else the built-in defaults; then the doom-loop check; then auto turns ask
// into allow inside the workspace; without a sandbox a shell command that
// no rule allowed asks; last, with no approver, ask becomes deny.
func (e *Engine) Decide(c Call) Decision {
	shell := c.Kind == KindCommand
	var verdict shellcmd.Verdict
	if shell {
		verdict = shellcmd.Analyze(c.Subject)
		if verdict.Blocked {
			return Decision{Action: Deny, Layer: LayerHardBlock,
				Reason: fmt.Sprintf("%s; this command is hard blocked and no rule can allow it", verdict.BlockReason)}
		}
	}
	if e.profile == ProfilePlan && !c.ReadOnly {
		return Decision{Action: Deny, Layer: LayerProfile,
			Reason: fmt.Sprintf("profile plan is read-only: tool %s can change the workspace and is not available", c.Tool)}
	}
	if p := controlPath(c); p != "" {
		return e.failClosed(c, controlDecision(c, p))
	}
	subjects := e.subjects(c, verdict)
	d := e.byRules(c, subjects, shell && (c.ShellReadOnly || verdict.ReadOnly))
	if d.Action == Deny {
		return d
	}
	if loop, ok := e.doomLoopDecision(c); ok && loop.Action != Allow {
		d = loop // ask or deny, at least as strict as d
	} else if e.profile == ProfileAuto && d.Action == Ask && shell && verdict.Obscured != "" {
		d.Reason = fmt.Sprintf("the program name %s is computed at run time or is a glob pattern, so nobody can say what the command runs: "+
			"profile auto does not run it unasked (%s)", verdict.Obscured, d.Reason)
	} else if e.profile == ProfileAuto && d.Action == Ask && e.inWorkspace(c, shell) {
		d = Decision{Action: Allow, Layer: LayerProfile, Reason: "profile auto allows what would ask: " + d.Reason}
	}
	if e.noSandbox && shell && d.Action == Allow && (d.Classified || d.Layer == LayerProfile) {
		d = Decision{Action: Ask, Layer: LayerSandbox,
			Reason: "this worker has no sandbox, so no shell command runs without a person's approval (" + d.Reason + ")"}
	}
	if e.profile == ProfileAuto {
		// Auto would have allowed the call had the classifier said
		// otherwise, so the read-only sandbox would protect nothing the
		// profile does not already give away.
		d.Classified = false
	}
	return e.failClosed(c, d)
}

// subjects lists what rule patterns are matched against: each command of a
// command call (all must match), the host of a URL call, or the cleaned
// path of any other call.
func (e *Engine) subjects(c Call, v shellcmd.Verdict) []string {
	switch c.Kind {
	case KindURL:
		return []string{c.Subject} // a host, already normalised by the tool's spec
	case KindCommand:
	default:
		return []string{cleanPath(c.Subject)}
	}
	if len(v.Commands) == 0 {
		return []string{strings.TrimSpace(c.Subject)}
	}
	return v.Commands
}

// shellLine is a command call's command line as an Exact rule is compared
// with it, or "" for other calls.
func shellLine(c Call) string {
	if c.Kind != KindCommand {
		return ""
	}
	return strings.TrimSpace(c.Subject)
}

// Remembered is the rule "approve and remember" adds for call c. A pattern
// the person typed is kept as written, a glob. Without one the rule is the
// call's exact subject as a literal, every glob character the model wrote
// escaped: its cleaned path, its host, or for a shell call its whole
// command line (an Exact rule, so neither a longer command, nor the same
// command with another redirection, nor a command of it on its own
// matches). A wider pattern is only ever one a person typed: a file named
// "**" or a command ending in "TestX*" must not become a rule that allows
// every later write or "go test -exec ...". A call without a subject (an
// MCP tool) is remembered as its tool, as before.
func Remembered(c Call, typed string) Rule {
	r := Rule{Tool: c.Tool, Pattern: typed, Action: Allow}
	switch {
	case typed != "":
	case c.Kind == KindURL:
		r.Pattern = Literal(c.Subject)
	case c.Kind == KindCommand:
		r.Pattern, r.Exact = Literal(strings.TrimSpace(c.Subject)), true
	default:
		r.Pattern = Literal(cleanPath(c.Subject))
	}
	return r
}

// match is the rule that decided one subject.
type match struct {
	rule  Rule
	layer string
}

// lastMatch finds the rule that decides one subject: the last matching rule
// of the last layer that has one.
func (e *Engine) lastMatch(c Call, subject, line string) (match, bool) {
	var m match
	found := false
	for _, l := range e.layers {
		for _, r := range l.Rules {
			if ruleMatches(r, c.Tool, c.Kind, subject, line) {
				m, found = match{rule: r, layer: l.Name}, true
			}
		}
	}
	return m, found
}

// anyDeny finds the first deny rule of any layer matching the subject; in
// auto, denials cannot be outranked.
func (e *Engine) anyDeny(c Call, subject, line string) (match, bool) {
	for _, l := range e.layers {
		for _, r := range l.Rules {
			if r.Action == Deny && ruleMatches(r, c.Tool, c.Kind, subject, line) {
				return match{rule: r, layer: l.Name}, true
			}
		}
	}
	return match{}, false
}

// ruleMatches reports whether r matches one subject of a call to tool,
// whose subject is of kind k. line is a command call's whole command line
// ("" for other calls), which an Exact rule is compared with instead of
// each command.
func ruleMatches(r Rule, tool string, k Kind, subject, line string) bool {
	if r.Exact {
		lit, ok := literalText(r.Pattern)
		return ok && k == KindCommand && matchWildcard(r.Tool, tool) && line != "" && lit == line
	}
	if (r.Tool == DoomLoopTool) != (tool == DoomLoopTool) {
		return false // doom_loop rules are only ever named exactly
	}
	if !matchWildcard(r.Tool, tool) {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	switch {
	case tool == DoomLoopTool:
		return matchWildcard(r.Pattern, subject) // the pattern is a tool name
	case k == KindCommand:
		return matchCommand(r.Pattern, subject)
	}
	return matchPath(r.Pattern, subject)
}

// byRules decides from the rules, each subject on its own, keeping the
// strictest outcome; subjects no rule matches get the built-in default.
func (e *Engine) byRules(c Call, subjects []string, shellReadOnly bool) Decision {
	var best *Decision
	classified := false
	keep := func(d Decision) {
		classified = classified || d.Classified
		if best == nil || d.Action.strictness() > best.Action.strictness() {
			best = &d
		}
	}
	line := shellLine(c)
	for _, s := range subjects {
		if e.profile == ProfileAuto {
			if m, ok := e.anyDeny(c, s, line); ok {
				keep(ruleDecision(m, c, s, len(subjects) > 1))
				continue
			}
		}
		if m, ok := e.lastMatch(c, s, line); ok {
			keep(ruleDecision(m, c, s, len(subjects) > 1))
			continue
		}
		keep(e.defaultDecision(c, shellReadOnly))
	}
	// One command allowed by the classifier alone puts the whole command
	// line in the read-only sandbox: a person's rule for "go test *" does
	// not vouch for the "sort ..." beside it.
	d := *best
	d.Classified = d.Action == Allow && classified
	return d
}

func ruleDecision(m match, c Call, subject string, several bool) Decision {
	r := m.rule
	reason := fmt.Sprintf("rule %s -> %s in layer %s", r, r.Action, m.layer)
	if several {
		reason += fmt.Sprintf(" (command %q)", subject)
	}
	return Decision{Action: r.Action, Layer: m.layer, Rule: &r, Reason: reason}
}

// defaultDecision is the defaults layer: read-only tools and read-only shell
// commands are allowed, everything else asks.
func (e *Engine) defaultDecision(c Call, shellReadOnly bool) Decision {
	switch {
	case c.Web:
		return Decision{Action: Ask, Layer: LayerDefaults,
			Reason: fmt.Sprintf("default: tool %s reaches the web from the worker, and what it sends can carry workspace data out -> ask", c.Tool)}
	case c.ReadOnly:
		return Decision{Action: Allow, Layer: LayerDefaults,
			Reason: fmt.Sprintf("default: tool %s only reads -> allow", c.Tool)}
	case shellReadOnly:
		return Decision{Action: Allow, Layer: LayerDefaults, Classified: true,
			Reason: "default: the shell command only reads (read-only classification) -> allow"}
	}
	return Decision{Action: Ask, Layer: LayerDefaults,
		Reason: fmt.Sprintf("default: tool %s can change the workspace -> ask", c.Tool)}
}

// inWorkspace reports whether auto may allow the call: commands always
// (hard blocks and deny rules were applied before), other tools when their
// path stays inside the workspace.
func (e *Engine) inWorkspace(c Call, shell bool) bool {
	if c.Web {
		return false // the web is not the workspace
	}
	return shell || c.Subject == "" || insideWorkspace(cleanPath(c.Subject))
}

// failClosed turns ask into deny when nobody can answer.
func (e *Engine) failClosed(c Call, d Decision) Decision {
	if d.Action != Ask || e.approver != ApproverNone {
		return d
	}
	example := fmt.Sprintf(`{"tool":%q,"action":"allow"}`, c.Tool)
	if f := strings.Fields(c.Subject); c.Kind == KindCommand && len(f) > 0 {
		example = fmt.Sprintf(`{"tool":%q,"pattern":%q,"action":"allow"}`, c.Tool, f[0]+" *")
	}
	if c.Kind == KindURL && c.Subject != "" {
		example = fmt.Sprintf(`{"tool":%q,"pattern":%q,"action":"allow"}`, c.Tool, c.Subject)
	}
	d.Action = Deny
	if d.Layer == LayerControl {
		d.Reason += "; denied because no approver is attached to this session, and only a person can allow it"
		return d
	}
	d.Reason = fmt.Sprintf("%s; denied because no approver is attached to this session: to allow it, add an allow rule "+
		"such as %s to the worker's permissions.json (its config directory), to a trusted workspace's .longrun/permissions.json, or to the session's start options", d.Reason, example)
	return d
}

// Visible reports whether a tool should be offered to the model at all: it is
// false when the profile or a rule without a pattern denies the tool outright
// and no later rule allows some of its subjects. k is the kind of the tool's
// subject (tools.Spec.Kind): what a pattern that matches everything is.
func (e *Engine) Visible(tool string, k Kind, readOnly bool) bool {
	if e.profile == ProfilePlan && !readOnly {
		return false
	}
	shell := k == KindCommand
	hidden := false
	for _, l := range e.layers {
		for _, r := range l.Rules {
			if !ruleMatches(Rule{Tool: r.Tool, Action: r.Action}, tool, k, "", "") {
				continue
			}
			switch {
			case !r.Exact && matchesEverything(r.Pattern, shell): // an exact rule is one line
				if r.Action == Deny && e.profile == ProfileAuto {
					return false // nothing outranks a denial in auto
				}
				hidden = r.Action == Deny
			case r.Action != Deny:
				hidden = false
			}
		}
	}
	return !hidden
}

// Covers reports whether r matches call c: its tool, and its pattern for every
// command of a command call or for the call's path. A caller that has just
// remembered r uses it to find the pending calls the rule now decides; it
// should still run Decide on them, because a hard block or a later deny
// outranks r.
func (e *Engine) Covers(r Rule, c Call) bool {
	var v shellcmd.Verdict
	if c.Kind == KindCommand {
		v = shellcmd.Analyze(c.Subject)
	}
	line := shellLine(c)
	for _, s := range e.subjects(c, v) {
		if !ruleMatches(r, c.Tool, c.Kind, s, line) {
			return false
		}
	}
	return true
}
