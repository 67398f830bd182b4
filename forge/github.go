package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"
)

// gitHub speaks GitHub's REST API (pulls, issue comments) through
// go-github, the client GitHub's own tools are built on; Gitea and
// Forgejo serve the same subset under /api/v1/.
type gitHub struct {
	c           *github.Client
	owner, repo string
}

// client is the forge's API for the repository behind remoteURL.
func (c Config) client(remoteURL string) (pulls, error) {
	if c.kind() == GitLab {
		return c.gitLabClient(remoteURL)
	}
	repo := c.Repo
	if repo == "" {
		var err error
		if repo, err = RepoFromURL(remoteURL); err != nil {
			return nil, err
		}
	}
	owner, name, err := splitRepo(repo)
	if err != nil {
		return nil, fmt.Errorf("--forge-repo: %w", err)
	}
	base, err := url.Parse(c.api())
	if err != nil {
		return nil, fmt.Errorf("--forge-api-url: %w", err)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	gc := github.NewClient(&http.Client{Timeout: time.Minute}).WithAuthToken(c.Token)
	gc.BaseURL = base
	return &gitHub{c: gc, owner: owner, repo: name}, nil
}

func (g *gitHub) FindOpen(ctx context.Context, head string) (*PR, error) {
	opts := &github.PullRequestListOptions{State: "open", Head: g.owner + ":" + head, ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 20; page++ {
		prs, resp, err := g.c.PullRequests.List(ctx, g.owner, g.repo, opts)
		if err != nil {
			return nil, refused(err)
		}
		for _, p := range prs {
			// Filtered here too: Gitea ignores the head parameter.
			if p.GetHead().GetRef() == head {
				return fromGitHub(p), nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, nil
}

func (g *gitHub) Create(ctx context.Context, pr PR) (*PR, error) {
	p, _, err := g.c.PullRequests.Create(ctx, g.owner, g.repo, &github.NewPullRequest{
		Title: github.Ptr(pr.Title), Body: github.Ptr(pr.Body), Head: github.Ptr(pr.Head), Base: github.Ptr(pr.Base),
	})
	if err != nil {
		return nil, refused(err)
	}
	return fromGitHub(p), nil
}

func (g *gitHub) Update(ctx context.Context, pr PR) (*PR, error) {
	p, _, err := g.c.PullRequests.Edit(ctx, g.owner, g.repo, pr.Number, &github.PullRequest{
		Title: github.Ptr(pr.Title), Body: github.Ptr(pr.Body),
	})
	if err != nil {
		return nil, refused(err)
	}
	return fromGitHub(p), nil
}

func (g *gitHub) Comments(ctx context.Context, number int) ([]string, error) {
	var out []string
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 20; page++ {
		cs, resp, err := g.c.Issues.ListComments(ctx, g.owner, g.repo, number, opts)
		if err != nil {
			return nil, refused(err)
		}
		for _, c := range cs {
			out = append(out, c.GetBody())
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

func (g *gitHub) Comment(ctx context.Context, number int, body string) error {
	_, _, err := g.c.Issues.CreateComment(ctx, g.owner, g.repo, number, &github.IssueComment{Body: github.Ptr(body)})
	return refused(err)
}

// refused marks an answer no retry can change (bad credentials, no such
// repository, a request the forge will not take) with ErrRefused; a
// rate limit or a server's failure stays as it is, for a retry.
func refused(err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		if c := er.Response.StatusCode; c >= 400 && c < 500 && c != http.StatusTooManyRequests && c != http.StatusRequestTimeout {
			return fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	return err
}

func fromGitHub(p *github.PullRequest) *PR {
	return &PR{
		Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), Body: p.GetBody(),
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(),
	}
}
