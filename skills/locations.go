package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WorkspaceDir is where a workspace keeps its skills, relative to the
// session's working directory, beside .longrun/permissions.json.
const WorkspaceDir = ".longrun/skills"

// Location is a directory of skill folders.
type Location struct {
	Source string // SourceWorkspace, SourceWorker or SourceUser
	Dir    string // absolute
	// Confine, when set, is a directory holding Dir that nothing is read
	// outside of, through a symlink or otherwise: the workspace, whose
	// content the model may have written. A person's own directories are
	// not confined, so a skill there may be a symlink to where it is kept.
	Confine string
}

// Locations are the places a session's skills come from, in precedence
// order: the working directory's .longrun/skills when the workspace is
// trusted, then the worker's own (worker, in the order given). Skills are
// instructions that reach the model, so an untrusted workspace's are not
// read at all.
func Locations(workDir string, trusted bool, worker []Location) []Location {
	var out []Location
	if trusted && workDir != "" {
		out = append(out, Location{Source: SourceWorkspace, Dir: filepath.Join(workDir, filepath.FromSlash(WorkspaceDir)), Confine: workDir})
	}
	return append(out, worker...)
}

// List reads every skill of locs: the first of each name, in precedence
// order, and within a location by folder name. A folder that is not a
// skill (no SKILL.md) is passed over; a skill that is broken is skipped
// with a note saying why, so one bad folder never stops a session. A
// location that does not exist is no skills. notes are for the person
// (the session's history, the worker's log).
func List(locs []Location) (list []Skill, notes []string) {
	seen := map[string]string{}
	for _, loc := range locs {
		names, err := loc.folders()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				notes = append(notes, fmt.Sprintf("skills in %s ignored: %v", loc.Dir, err))
			}
			continue
		}
		for _, name := range names {
			sk, _, err := loc.read(name)
			shown := loc.shown(name)
			switch {
			case errors.Is(err, errNotSkill):
				continue
			case err != nil:
				notes = append(notes, fmt.Sprintf("skill %s skipped: %v", shown, err))
				continue
			}
			if first, dup := seen[sk.Name]; dup {
				notes = append(notes, fmt.Sprintf("skill %s skipped: %s, found first, has its name", shown, first))
				continue
			}
			if len(list) == MaxSkills {
				notes = append(notes, fmt.Sprintf("skill %s and any after it skipped: a session lists at most %d skills", shown, MaxSkills))
				return list, notes
			}
			seen[sk.Name] = shown
			list = append(list, sk)
		}
	}
	return list, notes
}

// Open finds the skill called name as List would (the first valid one in
// precedence order) and returns it, its body and its folder, opened so
// nothing outside it can be read through it; the caller closes the
// folder. A name no location has is fs.ErrNotExist; when only broken
// skills have it, the error says what is wrong with the first.
func Open(locs []Location, name string) (Skill, string, *os.Root, error) {
	if err := ValidName(name); err != nil {
		return Skill{}, "", nil, err
	}
	var broken error
	for _, loc := range locs {
		sk, body, root, err := loc.open(name)
		switch {
		case err == nil:
			return sk, body, root, nil
		case errors.Is(err, errNotSkill), errors.Is(err, fs.ErrNotExist):
		case broken == nil:
			broken = fmt.Errorf("skill %s is broken: %w", loc.shown(name), err)
		}
	}
	if broken != nil {
		return Skill{}, "", nil, broken
	}
	return Skill{}, "", nil, fmt.Errorf("no skill named %q: %w", name, fs.ErrNotExist)
}

// errNotSkill marks a folder without a SKILL.md.
var errNotSkill = errors.New("no " + FileName)

// shown names a skill folder of loc for notes and the list: relative to
// the working directory for the workspace's, absolute for the others.
func (loc Location) shown(name string) string {
	p := filepath.Join(loc.Dir, name, FileName)
	if loc.Confine != "" {
		if rel, err := filepath.Rel(loc.Confine, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// root opens loc.Dir: beneath Confine when it is set.
func (loc Location) root() (*os.Root, error) {
	if loc.Confine == "" {
		return os.OpenRoot(loc.Dir)
	}
	top, err := os.OpenRoot(loc.Confine)
	if err != nil {
		return nil, err
	}
	defer top.Close()
	rel, err := filepath.Rel(loc.Confine, loc.Dir)
	if err != nil {
		return nil, err
	}
	return top.OpenRoot(rel)
}

// folders lists loc's entries that may be skill folders, sorted: not
// hidden, and directories or symlinks (checked when opened).
func (loc Location) folders() ([]string, error) {
	r, err := loc.root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !(e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			continue
		}
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names, nil
}

// open opens the skill folder name of loc and reads its SKILL.md.
func (loc Location) open(name string) (Skill, string, *os.Root, error) {
	var (
		r   *os.Root
		err error
	)
	if loc.Confine == "" {
		r, err = os.OpenRoot(filepath.Join(loc.Dir, name))
	} else {
		var top *os.Root
		if top, err = loc.root(); err == nil {
			r, err = top.OpenRoot(name)
			top.Close()
		}
	}
	if err != nil {
		return Skill{}, "", nil, err
	}
	sk, body, err := loc.parse(r, name)
	if err != nil {
		r.Close()
		return Skill{}, "", nil, err
	}
	return sk, body, r, nil
}

// read is open without keeping the folder.
func (loc Location) read(name string) (Skill, string, error) {
	sk, body, r, err := loc.open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Skill{}, "", errNotSkill // a symlink to nothing is no skill either
		}
		return Skill{}, "", err
	}
	r.Close()
	return sk, body, nil
}

// parse reads r's SKILL.md as the skill of folder name.
func (loc Location) parse(r *os.Root, name string) (Skill, string, error) {
	f, err := r.Open(FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, "", errNotSkill
	}
	if err != nil {
		return Skill{}, "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return Skill{}, "", err
	} else if !fi.Mode().IsRegular() {
		return Skill{}, "", fmt.Errorf("%s is not a regular file", FileName)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxSkillBytes+1))
	if err != nil {
		return Skill{}, "", fmt.Errorf("read %s: %w", loc.shown(name), err)
	}
	m, body, err := Parse(raw, name)
	if err != nil {
		return Skill{}, "", err
	}
	return Skill{Name: m.Name, Description: m.Description, Source: loc.Source, Path: loc.shown(name)}, body, nil
}
