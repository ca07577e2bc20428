package github

import (
	"fmt"
	"regexp"
)

// go-github v62 pastes logins, org names and team slugs into REST paths without escaping
// them, so "../x" or "a/b" would reach another endpoint. Every such value is checked before
// a request is built.
var (
	// loginRE is GitHub's rule for user and organization logins: letters, digits and
	// hyphens, starting with a letter or digit, at most 39 characters (case-insensitive);
	// underscores too, which Enterprise Managed Users have (name_shortcode).
	loginRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$`)
	// slugRE: team slugs are lower-case letters, digits, '_' and '-' (slugify never makes
	// anything else); upper case is accepted, GitHub compares slugs case-insensitively.
	slugRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)
)

func validLogin(s string) bool { return loginRE.MatchString(s) }

func validSlug(s string) bool { return slugRE.MatchString(s) }

// badLogin is the result for a user whose name is not a GitHub login: reported and skipped,
// never sent.
func badLogin(login, what string) userResult {
	return skipped("%q is not a valid GitHub login (letters, digits and '-', at most 39, not starting with '-'): %s; nothing was sent", login, what)
}

func badSlug(slug string) error {
	return fmt.Errorf("%q is not a valid GitHub team slug (letters, digits, '_' and '-'): nothing was sent", slug)
}
