package skills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxDescriptionLen+1)
	tests := []struct {
		name, folder, raw string
		want              Meta
		body              string
		err               string // substring; empty: valid
	}{
		{name: "minimal", folder: "pdf-forms", raw: "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n# Forms\nUse pdftk.\n",
			want: Meta{Name: "pdf-forms", Description: "Fill PDF forms."}, body: "# Forms\nUse pdftk.\n"},
		{name: "optional fields and a folded description", folder: "go-tests",
			raw:  "---\nname: go-tests\ndescription: >\n  Write table tests\n  in Go.\nlicense: MIT\nallowed-tools: shell read\nmetadata:\n  author: someone\n  version: \"1.0\"\n---\n\nBody.\n",
			want: Meta{Name: "go-tests", Description: "Write table tests in Go."}, body: "Body.\n"},
		{name: "CRLF and a byte-order mark", folder: "a1", raw: "\uFEFF---\r\nname: a1\r\ndescription: d\r\n---\r\nbody\r\n",
			want: Meta{Name: "a1", Description: "d"}, body: "body\n"},
		{name: "no body", folder: "a", raw: "---\nname: a\ndescription: d\n---", want: Meta{Name: "a", Description: "d"}},
		{name: "YAML end of document", folder: "a", raw: "---\nname: a\ndescription: d\n...\nbody", want: Meta{Name: "a", Description: "d"}, body: "body"},
		{name: "no front-matter", folder: "a", raw: "# Just markdown\n", err: "does not start with front-matter"},
		{name: "unclosed front-matter", folder: "a", raw: "---\nname: a\ndescription: d\n", err: "does not start with front-matter"},
		{name: "empty front-matter", folder: "a", raw: "---\n---\nbody", err: "the name is empty"},
		{name: "not YAML", folder: "a", raw: "---\nname: [a\n---\n", err: "is not YAML"},
		{name: "an unquoted colon", folder: "a", raw: "---\nname: a\ndescription: Use when: always\n---\n", err: `must be quoted, e.g. description: "Use when: ..."`},
		{name: "a quoted colon", folder: "a", raw: "---\nname: a\ndescription: \"Use when: always\"\n---\n", want: Meta{Name: "a", Description: "Use when: always"}},
		{name: "a list, not a mapping", folder: "a", raw: "---\n- a\n---\n", err: "is not YAML"},
		{name: "a list for the description", folder: "a", raw: "---\nname: a\ndescription: [x]\n---\n", err: "(yaml: unmarshal errors: line 3: cannot unmarshal !!seq into string)"},
		{name: "a name twice", folder: "a", raw: "---\nname: a\nname: a\ndescription: x\n---\n", err: `mapping key "name" already defined`},
		{name: "upper case name", folder: "PDF", raw: "---\nname: PDF\ndescription: d\n---\n", err: `the name "PDF" is not lowercase`},
		{name: "double hyphen", folder: "a--b", raw: "---\nname: a--b\ndescription: d\n---\n", err: "single hyphens"},
		{name: "leading hyphen", folder: "-a", raw: "---\nname: -a\ndescription: d\n---\n", err: "single hyphens"},
		{name: "path in the name", folder: "a", raw: "---\nname: ../a\ndescription: d\n---\n", err: "single hyphens"},
		{name: "long name", folder: strings.Repeat("a", 65), raw: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", err: "longer than 64"},
		{name: "name differs from folder", folder: "b", raw: "---\nname: a\ndescription: d\n---\n", err: `differs from its folder's name "b"`},
		{name: "no description", folder: "a", raw: "---\nname: a\n---\n", err: "the description is empty"},
		{name: "blank description", folder: "a", raw: "---\nname: a\ndescription: \"  \"\n---\n", err: "the description is empty"},
		{name: "long description", folder: "a", raw: "---\nname: a\ndescription: " + long + "\n---\n", err: "more than 1024"},
		{name: "not UTF-8", folder: "a", raw: "---\nname: a\ndescription: \xff\n---\n", err: "not UTF-8"},
		{name: "too large", folder: "a", raw: "---\nname: a\ndescription: d\n---\n" + strings.Repeat("x", MaxSkillBytes), err: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, body, err := Parse([]byte(tt.raw), tt.folder)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, m)
			require.Equal(t, tt.body, body)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody"), "a")
	f.Add([]byte("---\nname: &x a\ndescription: *x\n---\n"), "a")
	f.Add([]byte("---\n---\n"), "")
	f.Fuzz(func(t *testing.T, raw []byte, folder string) {
		m, _, err := Parse(raw, folder)
		if err != nil {
			return
		}
		// Whatever is accepted is a valid name for its folder, and a
		// bounded one-line description.
		require.NoError(t, ValidName(m.Name))
		require.Equal(t, folder, m.Name)
		require.NotEmpty(t, m.Description)
		require.NotContains(t, m.Description, "\n")
	})
}

// writeSkill makes dir/name/SKILL.md with the given name and description.
func writeSkill(t *testing.T, dir, folder, name, desc, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, folder), 0o755))
	raw := "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
	require.NoError(t, os.WriteFile(filepath.Join(dir, folder, FileName), []byte(raw), 0o644))
}

func TestListPrecedenceAndBrokenSkills(t *testing.T) {
	t.Parallel()
	ws, worker, user := t.TempDir(), t.TempDir(), t.TempDir()
	wsDir := filepath.Join(ws, filepath.FromSlash(WorkspaceDir))
	writeSkill(t, wsDir, "deploy", "deploy", "Deploy from the workspace.", "ws body")
	writeSkill(t, worker, "deploy", "deploy", "Deploy, the worker's.", "worker body")
	writeSkill(t, worker, "review", "review", "Review a change.", "")
	writeSkill(t, worker, "bad", "Bad", "x", "")             // invalid name
	writeSkill(t, user, "review", "review", "Shadowed.", "") // the worker's comes first
	writeSkill(t, user, "zeta", "zeta", "Last.", "")
	require.NoError(t, os.MkdirAll(filepath.Join(user, "not-a-skill"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(user, ".hidden"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(user, "README.md"), []byte("x"), 0o644))
	worker0 := []Location{{Source: SourceWorker, Dir: worker}, {Source: SourceUser, Dir: user}, {Source: SourceUser, Dir: filepath.Join(user, "missing")}}

	list, notes := List(Locations(ws, true, worker0))
	require.Equal(t, []Skill{
		{Name: "deploy", Description: "Deploy from the workspace.", Source: SourceWorkspace, Path: ".longrun/skills/deploy/SKILL.md"},
		{Name: "review", Description: "Review a change.", Source: SourceWorker, Path: filepath.Join(worker, "review", FileName)},
		{Name: "zeta", Description: "Last.", Source: SourceUser, Path: filepath.Join(user, "zeta", FileName)},
	}, list)
	require.Len(t, notes, 3, "%q", notes)
	require.Contains(t, notes[0], "skill "+filepath.Join(worker, "bad", FileName)+` skipped: SKILL.md front-matter: the name "Bad" is not lowercase`)
	require.Contains(t, notes[1], filepath.Join(worker, "deploy", FileName)+" skipped: .longrun/skills/deploy/SKILL.md, found first, has its name")
	require.Contains(t, notes[2], filepath.Join(user, "review", FileName)+" skipped")

	// Untrusted: the workspace's skills are not read; the worker's one
	// of the same name is what there is.
	list, _ = List(Locations(ws, false, worker0))
	require.Equal(t, SourceWorker, list[0].Source)
	require.Equal(t, "Deploy, the worker's.", list[0].Description)

	sk, body, root, err := Open(Locations(ws, false, worker0), "deploy")
	require.NoError(t, err)
	root.Close()
	require.Equal(t, SourceWorker, sk.Source)
	require.Equal(t, "worker body", body)
	sk, body, root, err = Open(Locations(ws, true, worker0), "deploy")
	require.NoError(t, err)
	root.Close()
	require.Equal(t, SourceWorkspace, sk.Source)
	require.Equal(t, "ws body", body)

	_, _, _, err = Open(worker0, "nope")
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, _, _, err = Open(worker0, "not-a-skill")
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, _, _, err = Open(worker0, "../review")
	require.ErrorContains(t, err, "single hyphens")
}

// A broken skill is reported by Open when no valid one has its name, and
// passed over when a later location has a valid one (as List does).
func TestOpenBroken(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	writeSkill(t, a, "x", "x", "", "")
	locs := []Location{{Source: SourceWorker, Dir: a}}
	_, _, _, err := Open(locs, "x")
	require.ErrorContains(t, err, "skill "+filepath.Join(a, "x", FileName)+" is broken: SKILL.md front-matter: the description is empty")
	writeSkill(t, b, "x", "x", "good", "ok")
	sk, body, root, err := Open(append(locs, Location{Source: SourceUser, Dir: b}), "x")
	require.NoError(t, err)
	root.Close()
	require.Equal(t, SourceUser, sk.Source)
	require.Equal(t, "ok", body)
}

// A workspace's skills are read beneath the workspace: a skill folder, or
// the skills directory itself, that links out of it is skipped. A
// person's own directories may link to where a skill is kept.
func TestWorkspaceSymlinksConfined(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	writeSkill(t, outside, "secret", "secret", "Outside.", "do bad things")
	wsDir := filepath.Join(ws, filepath.FromSlash(WorkspaceDir))
	require.NoError(t, os.MkdirAll(wsDir, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(wsDir, "secret")))
	list, notes := List(Locations(ws, true, nil))
	require.Empty(t, list)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "skill .longrun/skills/secret/SKILL.md skipped")
	_, _, _, err := Open(Locations(ws, true, nil), "secret")
	require.Error(t, err)
	require.NotErrorIs(t, err, nil)

	ws2 := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws2, ".longrun"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws2, ".longrun", "skills")))
	list, notes = List(Locations(ws2, true, nil))
	require.Empty(t, list)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "ignored")

	user := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(user, "secret")))
	list, _ = List([]Location{{Source: SourceUser, Dir: user}})
	require.Len(t, list, 1)
	require.Equal(t, "secret", list[0].Name)
}

func TestListCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range MaxSkills + 2 {
		n := "s" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i)
		writeSkill(t, dir, n, n, "d", "")
	}
	list, notes := List([]Location{{Source: SourceUser, Dir: dir}})
	require.Len(t, list, MaxSkills)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "s100/SKILL.md and any after it skipped: a session lists at most 100 skills")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

func TestReadFileAndFiles(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	writeSkill(t, dir, "s", "s", "d", "see references/guide.md")
	sd := filepath.Join(dir, "s")
	require.NoError(t, os.MkdirAll(filepath.Join(sd, "references"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sd, "references", "guide.md"), []byte("the guide\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sd, "logo.png"), []byte("\x89PNG\x00\x00"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sd, "big.txt"), []byte(strings.Repeat("é", MaxFileBytes)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(sd, "link")))
	_, _, root, err := Open([]Location{{Source: SourceUser, Dir: dir}}, "s")
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })

	got, err := ReadFile(root, "references/guide.md")
	require.NoError(t, err)
	require.Equal(t, "the guide\n", got)
	got, err = ReadFile(root, "./references/../references/guide.md")
	require.NoError(t, err)
	require.Equal(t, "the guide\n", got)
	got, err = ReadFile(root, "big.txt")
	require.NoError(t, err)
	require.LessOrEqual(t, len(got), MaxFileBytes+100)
	require.Contains(t, got, "[cut at 64 KiB of 131072 bytes]")

	for _, tt := range []struct{ rel, err string }{
		{"", "name a file"},
		{"../s/SKILL.md", "outside the skill's folder"},
		{"/etc/passwd", "outside the skill's folder"},
		{"references/../../x", "outside the skill's folder"},
		{"link", "path escapes"},
		{"logo.png", "binary"},
		{"references", "is a directory"},
		{"nope.md", "the skill has no file nope.md"},
	} {
		_, err := ReadFile(root, tt.rel)
		require.ErrorContains(t, err, tt.err, tt.rel)
		require.False(t, errors.Is(err, nil))
	}
	_, err = ReadFile(root, "link")
	require.NotContains(t, err.Error(), "secret\n")

	files, more, err := Files(root)
	require.NoError(t, err)
	require.Zero(t, more)
	require.Equal(t, []string{"big.txt", "link", "logo.png", "references/guide.md"}, files)
}

func TestSection(t *testing.T) {
	t.Parallel()
	require.Empty(t, Section(nil, "skill"))
	got := Section([]Skill{{Name: "a", Description: "Does a."}, {Name: "b", Description: "Does b."}}, "skill")
	require.True(t, strings.HasPrefix(got, "Skills: instructions for particular tasks"), got)
	require.Contains(t, got, "call `skill` with its name")
	require.True(t, strings.HasSuffix(got, "\n\n- a: Does a.\n- b: Does b."), got)

	var many []Skill
	for i := range 40 {
		many = append(many, Skill{Name: "s" + itoa(i), Description: strings.Repeat("d", MaxDescriptionLen)})
	}
	got = Section(many, "skill")
	require.Less(t, len(got), MaxListBytes+1024)
	require.Contains(t, got, "(25 more skills are not listed: the list is capped at 16 KiB)")
	require.Equal(t, got, Section(many, "skill"), "the same list renders the same text")
}
