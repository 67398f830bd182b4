package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/toolspec"
)

// SkillName is the name the model calls the skill tool by.
const SkillName = toolspec.SkillName

//go:embed skill.md
var skillDescription string

// SkillParams are the skill tool's arguments.
type SkillParams struct {
	Name string `json:"name" jsonschema:"The skill's name, as listed."`
	File string `json:"file,omitempty" jsonschema:"A file of the skill's folder to read instead of its instructions, relative to the folder (e.g. references/forms.md)."`
}

// SkillConfig is where the worker finds skills besides the workspace.
type SkillConfig struct {
	// Locations are the worker's own skill directories (its configuration
	// directory's skills/, then the user's), in precedence order after
	// the workspace's.
	Locations []skills.Location
	// TrustWorkspace: the working directory's .longrun/skills count.
	// They are instructions to the model, and an untrusted workspace's
	// content may be the model's own or an attacker's.
	TrustWorkspace bool
}

// Skill loads one skill's instructions, or a file of its folder, on
// demand: the session lists only names and descriptions. It is read-only.
type Skill struct{ cfg SkillConfig }

// NewSkill returns the skill tool.
func NewSkill(cfg SkillConfig) *Skill { return &Skill{cfg: cfg} }

// Spec describes the skill tool. It is offered only to sessions whose
// workspace configuration lists skills (RequiresSkills).
func (*Skill) Spec() Spec {
	return Spec{
		Name:        SkillName,
		Description: skillDescription,
		Parameters: paramsSchema[SkillParams](func(p paramProps) {
			nonEmpty(p["name"])
		}),
		ReadOnly:       true,
		TimeoutSeconds: 30,
		Requires:       RequiresSkills,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared,
		SubjectArg: "name", SubjectKind: SubjectPath, SummaryArg: "name", // a skill name, matched by globs as a path is
	}
}

// Run loads the skill, or the file of it.
func (t *Skill) Run(_ context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool skill: no workspace")
	}
	var p SkillParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	locs := t.locations(env)
	sk, body, root, err := skills.Open(locs, p.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return t.notFound(env, locs, p.Name), nil
	}
	if err != nil {
		return Errorf("%v", err), nil
	}
	defer root.Close()
	if p.File != "" {
		text, err := skills.ReadFile(root, p.File)
		if err != nil {
			return Errorf("skill %s: %v", sk.Name, err), nil
		}
		return Result{Content: text}, nil
	}
	var b strings.Builder
	body = strings.TrimRight(body, "\n")
	fmt.Fprintf(&b, "Skill %s (%s, %s):\n\n%s", sk.Name, sk.Source, sk.Path, skills.Cut(body, int64(len(body))))
	files, more, err := skills.Files(root)
	if err != nil {
		return Result{}, fmt.Errorf("list skill %s: %w", sk.Path, err)
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "\n\nFiles of the skill's folder (read one with file): %s", strings.Join(files, ", "))
		if more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
	}
	return Result{Content: b.String()}, nil
}

// locations are where the skill is looked for: the workspace's skills
// where the session's list was read (env.Origin, the person's working
// directory, for a session with a checkout), then the checkout's own
// when it has a copy of them (committed; a worker that restored a lost
// worker's checkout may have no Origin holding them), then the worker's.
func (t *Skill) locations(env Env) []skills.Location {
	locs := skills.Locations(env.Workspace.Root(), t.cfg.TrustWorkspace, t.cfg.Locations)
	if env.Origin == nil || env.Origin.Root() == env.Workspace.Root() {
		return locs
	}
	return append(skills.Locations(env.Origin.Root(), t.cfg.TrustWorkspace, nil), locs...)
}

// notFound answers for a name no location has, naming the skills there
// are; when an untrusted workspace holds it, it says that is why.
func (t *Skill) notFound(env Env, locs []skills.Location, name string) Result {
	if !t.cfg.TrustWorkspace {
		for _, ws := range []*Workspace{env.Origin, env.Workspace} {
			if ws == nil {
				continue
			}
			dir := filepath.Join(ws.Root(), filepath.FromSlash(skills.WorkspaceDir), name)
			if _, err := os.Lstat(dir); err == nil {
				return Errorf("skill %s is in the workspace's %s, which is not used: the workspace is not trusted, and a skill is instructions to you (see README Security model). Only the skills listed can be loaded.",
					name, skills.WorkspaceDir)
			}
		}
	}
	list, _ := skills.List(locs)
	names := make([]string, len(list))
	for i, sk := range list {
		names[i] = sk.Name
	}
	where := ""
	if t.cfg.TrustWorkspace {
		where = fmt.Sprintf(" (workspace skills are read from %s of the working directory)", skills.WorkspaceDir)
	}
	if len(names) == 0 {
		return Errorf("no skill named %q, and there are none here%s", name, where)
	}
	return Errorf("no skill named %q; the skills are: %s%s", name, strings.Join(names, ", "), where)
}
