package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitLab speaks GitLab's REST API v4 (merge requests and their notes)
// through GitLab's own Go client, gitlab.com/gitlab-org/api/client-go.
// A merge request is Publish's pull request: its iid the number, its
// description the body, its source branch the head.
type gitLab struct {
	c       *gitlab.Client
	project string // the project's full path, "group/subgroup/name"
}

// gitLabAPI is GitLab.com's API, the default of a GitLab forge.
const gitLabAPI = "https://gitlab.com/api/v4/"

// gitLabClient is the GitLab API for the project behind remoteURL.
func (c Config) gitLabClient(remoteURL string) (pulls, error) {
	project := c.Repo
	if project == "" {
		var err error
		if project, err = ProjectFromURL(remoteURL); err != nil {
			return nil, err
		}
	}
	if err := checkProject(project); err != nil {
		return nil, fmt.Errorf("--forge-repo: %w", err)
	}
	gc, err := gitlab.NewClient(c.Token,
		gitlab.WithBaseURL(c.api()),
		gitlab.WithHTTPClient(&http.Client{Timeout: time.Minute}),
		// The activity retries a failed publish as a whole (each step
		// finds what an earlier attempt did); the client's own quick
		// retries would only hide a broken server for longer.
		gitlab.WithoutRetries(),
		// Its warning about an http:// URL is not the worker's to log.
		gitlab.WithURLWarningLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return nil, fmt.Errorf("--forge-api-url: %w", err)
	}
	return &gitLab{c: gc, project: project}, nil
}

func (g *gitLab) FindOpen(ctx context.Context, head string) (*PR, error) {
	opts := &gitlab.ListProjectMergeRequestsOptions{
		State: gitlab.Ptr("opened"), SourceBranch: gitlab.Ptr(head),
		ListOptions: gitlab.ListOptions{PerPage: 100},
	}
	for page := 0; page < 20; page++ {
		mrs, resp, err := g.c.MergeRequests.ListProjectMergeRequests(g.project, opts, gitlab.WithContext(ctx))
		if err != nil {
			return nil, gitLabRefused(err)
		}
		for _, m := range mrs {
			if m.SourceBranch == head && m.State == "opened" {
				return &PR{Number: int(m.IID), URL: m.WebURL, Title: m.Title, Body: m.Description, Head: m.SourceBranch, Base: m.TargetBranch}, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, nil
}

func (g *gitLab) Create(ctx context.Context, pr PR) (*PR, error) {
	m, _, err := g.c.MergeRequests.CreateMergeRequest(g.project, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr(pr.Title), Description: gitlab.Ptr(pr.Body),
		SourceBranch: gitlab.Ptr(pr.Head), TargetBranch: gitlab.Ptr(pr.Base),
	}, gitlab.WithContext(ctx))
	if err != nil {
		return nil, gitLabRefused(err)
	}
	return fromGitLab(m), nil
}

func (g *gitLab) Update(ctx context.Context, pr PR) (*PR, error) {
	m, _, err := g.c.MergeRequests.UpdateMergeRequest(g.project, int64(pr.Number), &gitlab.UpdateMergeRequestOptions{
		Title: gitlab.Ptr(pr.Title), Description: gitlab.Ptr(pr.Body),
	}, gitlab.WithContext(ctx))
	if err != nil {
		return nil, gitLabRefused(err)
	}
	return fromGitLab(m), nil
}

func (g *gitLab) Comments(ctx context.Context, number int) ([]string, error) {
	var out []string
	opts := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	for page := 0; page < 20; page++ {
		notes, resp, err := g.c.Notes.ListMergeRequestNotes(g.project, int64(number), opts, gitlab.WithContext(ctx))
		if err != nil {
			return nil, gitLabRefused(err)
		}
		for _, n := range notes {
			out = append(out, n.Body)
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

func (g *gitLab) Comment(ctx context.Context, number int, body string) error {
	_, _, err := g.c.Notes.CreateMergeRequestNote(g.project, int64(number), &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	return gitLabRefused(err)
}

// gitLabRefused marks a 4xx answer other than a rate limit or a timeout
// with ErrRefused, as refused does for GitHub's.
func gitLabRefused(err error) error {
	if errors.Is(err, gitlab.ErrNotFound) { // the client's sentinel for a 404
		return fmt.Errorf("%w: %w (no such project or merge request, or the token may not see it)", ErrRefused, err)
	}
	var er *gitlab.ErrorResponse
	if errors.As(err, &er) {
		c := er.StatusCode
		if c == 0 && er.Response != nil {
			c = er.Response.StatusCode
		}
		if c >= 400 && c < 500 && c != http.StatusTooManyRequests && c != http.StatusRequestTimeout {
			return fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	return err
}

func fromGitLab(m *gitlab.MergeRequest) *PR {
	return &PR{Number: int(m.IID), URL: m.WebURL, Title: m.Title, Body: m.Description, Head: m.SourceBranch, Base: m.TargetBranch}
}

// ProjectFromURL is a GitLab project's full path from its remote's URL:
// every element of the URL's path, without ".git"
// (https://host/group/sub/name.git is "group/sub/name"), since GitLab's
// groups nest. A GitLab under a path of its own (https://host/gitlab/...)
// needs --forge-repo.
func ProjectFromURL(remote string) (string, error) {
	p := remote
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" {
		p = u.Path
	} else if _, rest, ok := strings.Cut(remote, ":"); ok && !strings.HasPrefix(remote, "/") {
		p = rest // scp-like git@host:group/name.git
	}
	p = strings.Trim(strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git"), "/")
	if checkProject(p) != nil {
		return "", fmt.Errorf("cannot tell the GitLab project from the remote %s: set --forge-repo GROUP/NAME", Redact(remote))
	}
	return p, nil
}

// checkProject accepts a project's full path: two or more non-empty
// elements, none "." or "..".
func checkProject(p string) error {
	parts := strings.Split(p, "/")
	if len(parts) < 2 {
		return fmt.Errorf("%q: want GROUP/NAME (or GROUP/SUBGROUP/NAME)", p)
	}
	for _, s := range parts {
		if s == "" || s == "." || s == ".." {
			return fmt.Errorf("%q: want GROUP/NAME (or GROUP/SUBGROUP/NAME)", p)
		}
	}
	return nil
}
