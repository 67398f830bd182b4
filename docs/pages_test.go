package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pages are the README and every page of docs/, by path from this
// directory.
func pages(t *testing.T) []string {
	p, err := filepath.Glob("*.md")
	require.NoError(t, err)
	require.Contains(t, p, reference)
	return append([]string{"../README.md"}, p...)
}

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	h = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// outsideFences returns the lines of a page with the lines of code
// blocks blanked, and the code blocks' lines on their own.
func outsideFences(text string) (prose, code []string) {
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			prose = append(prose, "")
			continue
		}
		if fence {
			code = append(code, l)
			prose = append(prose, "")
		} else {
			prose = append(prose, l)
		}
	}
	return prose, code
}

func anchors(text string) map[string]bool {
	a := map[string]bool{}
	prose, _ := outsideFences(text)
	for _, l := range prose {
		if m := regexp.MustCompile(`^#{1,6} (.*)`).FindStringSubmatch(l); m != nil {
			a[slug(m[1])] = true
		}
	}
	return a
}

// TestLinksReachTheirHeadings checks every relative link of the README
// and the pages: the file exists, and the heading a #fragment names is on
// that page. Moving a section breaks the links to it; this says where.
func TestLinksReachTheirHeadings(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	var broken []string
	n := 0
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		prose, _ := outsideFences(string(b))
		for i, l := range prose {
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
					continue
				}
				n++
				file, frag, _ := strings.Cut(target, "#")
				path := p
				if file != "" {
					path = filepath.Join(filepath.Dir(p), file)
				}
				text, err := os.ReadFile(path)
				if err != nil {
					if _, statErr := os.Stat(path); statErr != nil {
						broken = append(broken, p+":"+strconv.Itoa(i+1)+": "+target+": no such file")
					}
					continue // a directory
				}
				if frag != "" && strings.HasSuffix(path, ".md") && !anchors(string(text))[frag] {
					broken = append(broken, p+":"+strconv.Itoa(i+1)+": "+target+": no such heading")
				}
			}
		}
	}
	require.Empty(t, broken)
	t.Logf("%d links checked", n)
}

// oldNames finds the programs named by their source directories, not as
// installed: the word starter anywhere (a path such as starter/ or
// .longrun-bin/starter aside), and worker or devserver used as a command,
// at the start of a code line or of a code span followed by a flag or an
// argument.
var (
	starterWord = regexp.MustCompile(`(^|[^-/.\w])starter($|[^/\w])`)
	spanCommand = regexp.MustCompile("`(starter|worker|devserver)( +-| +[a-z./~'\"])")
	lineCommand = regexp.MustCompile(`^\s*(\$ )?(starter|worker|devserver)( +-| +[a-z./~'"]|\s*$)`)
	// printed is what longrun-devserver itself prints when it is ready.
	printed = regexp.MustCompile("`devserver ready: ")
)

// TestPagesUseTheInstalledNames checks that the README and the pages name
// the programs as make install installs them (longrun, longrun-worker,
// longrun-devserver) everywhere but the README's layout section, which
// names the directories.
func TestPagesUseTheInstalledNames(t *testing.T) {
	var found []string
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		text := string(b)
		if p == "../README.md" {
			layout, ok := section(text, "## Layout")
			require.True(t, ok, "the README has no layout section")
			text = strings.Replace(text, layout, "", 1)
		}
		prose, code := outsideFences(text)
		for i, l := range prose {
			if starterWord.MatchString(l) || spanCommand.MatchString(printed.ReplaceAllString(l, "")) {
				found = append(found, p+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(l))
			}
		}
		for _, l := range code {
			if lineCommand.MatchString(l) || starterWord.MatchString(l) {
				found = append(found, p+": code: "+strings.TrimSpace(l))
			}
		}
	}
	require.Empty(t, found, "use longrun, longrun-worker and longrun-devserver")
}
