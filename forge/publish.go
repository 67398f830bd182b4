package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/longrun/longrun/checkout"
)

// ErrRefused wraps a forge's answer that no retry can change: bad
// credentials, no such repository, a request it will not take.
var ErrRefused = errors.New("the forge refused")

// PR is a pull request as Publish reads and writes it.
type PR struct {
	Number int
	URL    string
	Title  string
	Body   string
	Head   string // the branch
	Base   string
}

// pulls is what Publish needs of a forge's API.
type pulls interface {
	// FindOpen is the open pull request from branch head, nil if none.
	FindOpen(ctx context.Context, head string) (*PR, error)
	Create(ctx context.Context, pr PR) (*PR, error)
	Update(ctx context.Context, pr PR) (*PR, error)
	// Comments are the bodies of the pull request's comments.
	Comments(ctx context.Context, number int) ([]string, error)
	Comment(ctx context.Context, number int, body string) error
}

// Publish pushes the session's branch to the configured remote and opens
// its pull request, or updates the open one from that branch. Every step
// can be run again after a crash at any point and lands in the same
// place: the push is of the same commit, the pull request is looked up by
// its branch before one is made, and the comment announcing a new commit
// on an existing pull request is posted only when none for that commit is
// there. Its error never holds the token.
func Publish(ctx context.Context, c Config, req Request) (Published, error) {
	if !c.Enabled() {
		return Published{}, fmt.Errorf("publish: no remote configured (--push-remote)")
	}
	remoteURL := checkout.RemoteURL(ctx, req.Dir, c.Remote)
	auth := c.gitAuth(remoteURL)
	out := Published{Remote: Redact(remoteURL)}
	commit, err := checkout.PushTo(ctx, req.Dir, c.Remote, req.Branch, auth)
	if err != nil {
		return out, c.scrub(err)
	}
	out.Commit = commit
	stat := ""
	if req.BaseCommit != "" {
		stat, _ = checkout.DiffStat(ctx, req.Dir, req.BaseCommit, commit)
	}
	base := c.Base
	if base == "" {
		if base, err = checkout.RemoteHead(ctx, req.Dir, c.Remote, auth); err != nil {
			return out, c.scrub(err)
		}
		if base == "" {
			base = "main"
		}
	}
	api, err := c.client(remoteURL)
	if err != nil {
		return out, err
	}
	pr, created, err := openOrUpdate(ctx, api, PR{Title: title(req), Body: c.body(req, stat, commit), Head: req.Branch, Base: base}, commit)
	if err != nil {
		return out, c.scrub(err)
	}
	out.URL, out.Number, out.Created = pr.URL, pr.Number, created
	return out, nil
}

// openOrUpdate makes want the open pull request of its branch: created
// when there is none, else commented on (once per commit) and updated.
func openOrUpdate(ctx context.Context, api pulls, want PR, commit string) (*PR, bool, error) {
	have, err := api.FindOpen(ctx, want.Head)
	if err != nil {
		return nil, false, fmt.Errorf("find the pull request of %s: %w", want.Head, err)
	}
	if have == nil {
		pr, err := api.Create(ctx, want)
		if err != nil {
			return nil, false, fmt.Errorf("open a pull request for %s: %w", want.Head, err)
		}
		return pr, true, nil
	}
	if prev := bodyCommit(have.Body); prev != "" && prev != commit {
		if err := commentOnce(ctx, api, have.Number, commit); err != nil {
			return nil, false, err
		}
	}
	want.Number = have.Number
	pr, err := api.Update(ctx, want)
	if err != nil {
		return nil, false, fmt.Errorf("update pull request #%d: %w", have.Number, err)
	}
	return pr, false, nil
}

// commentOnce says on the pull request that the session pushed commit,
// unless a comment already says so (an earlier attempt posted it and was
// killed before the update).
func commentOnce(ctx context.Context, api pulls, number int, commit string) error {
	marker := fmt.Sprintf(pushedMarker, commit)
	comments, err := api.Comments(ctx, number)
	if err != nil {
		return fmt.Errorf("read the comments of pull request #%d: %w", number, err)
	}
	for _, c := range comments {
		if strings.Contains(c, marker) {
			return nil
		}
	}
	if err := api.Comment(ctx, number, fmt.Sprintf("Longrun pushed %s to this branch; the description is updated.\n\n%s\n", commit, marker)); err != nil {
		return fmt.Errorf("comment on pull request #%d: %w", number, err)
	}
	return nil
}

// scrub takes the token out of an error's text, should a server have
// echoed it: errors go to logs and histories.
func (c Config) scrub(err error) error {
	if err == nil || c.Token == "" || !strings.Contains(err.Error(), c.Token) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), c.Token, "[token]"))
}
