// Package prompt renders a session's default system prompt: a text per
// model family, kept as template files in the repository (templates/,
// embedded), followed by an environment block saying where the session
// runs, what it may do and how it ends.
//
// It is pure: the workflow passes every fact in (the date from its own
// clock, the branch and OS from the workspace-config activity's recorded
// result), so the same input renders the same text, on replay too. It
// imports neither Temporal nor openai-go.
package prompt

import (
	"bytes"
	"embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

// Family is a group of models that get the same prompt text: they were
// trained on different harnesses (Codex, Claude Code, gemini-cli) and do
// best with the habits and wording of their own.
type Family string

// The families with a prompt of their own. FamilyDefault is every other
// model (DeepSeek, Qwen, Llama, Mistral, gpt-4.1, gpt-oss, ...).
const (
	FamilyGPT5    Family = "gpt-5"
	FamilyClaude  Family = "claude"
	FamilyGemini  Family = "gemini"
	FamilyDefault Family = "default"
)

// Families lists every family, in a fixed order (golden tests range over it).
var Families = []Family{FamilyGPT5, FamilyClaude, FamilyGemini, FamilyDefault}

// FamilyOf picks the family for a model id, ignoring a provider prefix
// ("openai/gpt-5" is gpt-5). The GPT-5 family is the OpenAI models trained
// on Codex's harness: ids with "codex", o3/o4 reasoning models, and "gpt-"
// ids that are neither gpt-4 nor open-weight gpt-oss (the rule
// tools.EditToolsFor uses to give them apply_patch).
func FamilyOf(model string) Family {
	id := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	switch {
	case strings.Contains(id, "claude"):
		return FamilyClaude
	case strings.Contains(id, "gemini"):
		return FamilyGemini
	case strings.Contains(id, "codex"),
		strings.HasPrefix(id, "o3"), strings.HasPrefix(id, "o4"),
		strings.Contains(id, "gpt-") && !strings.Contains(id, "gpt-4") && !strings.Contains(id, "oss"):
		return FamilyGPT5
	}
	return FamilyDefault
}

// Env is what the prompt says about the session and where it runs. The
// zero value of a field means "unknown" and its line is left out.
type Env struct {
	// Model is the model id the session calls; it picks the family.
	Model string
	// WorkDir is the absolute path of the session's working directory on
	// the worker; relative paths in tool calls resolve against it.
	WorkDir string
	// GitRoot is the checkout holding WorkDir, "" when it is in none;
	// Branch its current branch, "" when HEAD is detached at Head (a
	// short commit id).
	GitRoot, Branch, Head string
	// OS and Shell describe the worker's machine and the shell the shell
	// tool runs commands with.
	OS, Shell string
	// Date is the session's start, from the workflow's clock.
	Date time.Time
	// Sandbox is set when shell commands run in the sandbox; Network when
	// sandboxed commands may reach the network.
	Sandbox, Network bool
	// Profile is the session's permission profile: build, plan or auto.
	Profile string
	// Unattended is set when nobody approves calls (approval "none"):
	// every ask is a denial.
	Unattended bool
	// ApprovalTimeout bounds one call's wait for a decision; 0 is none.
	ApprovalTimeout time.Duration
	// Tools are the names of the tools offered; ReadTools and AskTools
	// split them into those that run at once and those that ask a person
	// by default (rules may change either).
	Tools, ReadTools, AskTools []string
	// SubAgent is set on a session started by another session's task
	// tool: its final message is that call's result.
	SubAgent bool
}

// Has reports whether the session offers the tool name.
func (e Env) Has(name string) bool { return slices.Contains(e.Tools, name) }

// Day is the date line's text, e.g. "2026-12-03 (Thursday)".
func (e Env) Day() string {
	if e.Date.IsZero() {
		return ""
	}
	return e.Date.UTC().Format("2006-01-02 (Monday)")
}

var templates = template.Must(template.New("prompt").Funcs(template.FuncMap{
	"list":     list,
	"duration": duration,
}).ParseFS(templateFiles, "templates/*.tmpl"))

// Render renders the default system prompt for env's model family.
func Render(env Env) (string, error) {
	return RenderFamily(FamilyOf(env.Model), env)
}

// RenderFamily renders the default system prompt of family f. An error
// means a template is broken, a bug the golden tests catch.
func RenderFamily(f Family, env Env) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, string(f)+".tmpl", env); err != nil {
		return "", fmt.Errorf("render %s prompt: %w", f, err)
	}
	return tidy(b.String()), nil
}

// list joins tool names as `a`, `b` and `c`.
func list(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// duration writes d as a person would: 1h, 90m, 1h30m, 45s.
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// tidy drops the blank lines the templates' conditionals leave: no more
// than one blank line in a row, none at either end, and no trailing
// spaces, so the goldens read like the text a person would write.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
