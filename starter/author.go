package main

import "os/user"

// localAuthor is the name a decision sent from this machine carries
// (Approval.Author): the local user's login, "" when it cannot be read.
// The session does not verify it; the pull request's body shows it as
// the name the decision came with.
func localAuthor() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}
