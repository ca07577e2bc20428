package aad

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/providers"
)

// maxNickLen is the longest mailNickname Graph takes.
const maxNickLen = 64

// nickForbidden are the printable ASCII characters a mailNickname cannot contain. The group
// resource of Graph v1.0 documents mailNickname as "Maximum length is 64 characters. This
// property can contain only characters in the ASCII character set 0 - 127 except the
// following characters: @ () \ [] " ; : <> , SPACE"; earlier versions of that text, still in
// the SDKs' generated models, list the period too. A group this provider would create with
// such a name would be refused at apply (400 "Invalid value specified for property
// 'mailNickname'"), so the period is refused as well: refusing at plan time a name Graph
// might have taken costs a rename, failing at apply costs a half-applied run.
const nickForbidden = `@()\[]";:.<>,`

// nickProblem says why name cannot be a mailNickname ("" when it can): the first character
// Graph refuses (and where), or the length.
func nickProblem(name string) string {
	if name == "" {
		return "it is empty"
	}
	for i, r := range name {
		var what string
		switch {
		case r == ' ':
			what = "a space"
		case r == utf8.RuneError:
			what = "invalid UTF-8"
		case r < ' ' || r == 0x7f:
			what = fmt.Sprintf("the control character %U", r)
		case r > 0x7f:
			what = fmt.Sprintf("%q, which is not ASCII,", r)
		case strings.ContainsRune(nickForbidden, r):
			what = fmt.Sprintf("%q", r)
		default:
			continue
		}
		return fmt.Sprintf("it contains %s at character %d (a mailNickname is at most %d ASCII characters, none of %s or space)",
			what, utf8.RuneCountInString(name[:i])+1, maxNickLen, spaced(nickForbidden))
	}
	if n := len(name); n > maxNickLen {
		return fmt.Sprintf("it is %d characters long; a mailNickname is at most %d", n, maxNickLen)
	}
	return ""
}

func spaced(s string) string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return strings.Join(out, " ")
}

// badNickError is the plan-time refusal of a group whose name Graph would refuse as a
// mailNickname. It names the definition file (when known) and the character.
func badNickError(g *providers.Group, name, why string) error {
	where := g.DN
	if g.File != "" {
		where = g.File + " (" + g.DN + ")"
	}
	return fmt.Errorf("%s: the group name %q cannot be an Entra ID mailNickname: %s; rename the file, or point it at an "+
		"existing group with metadata_aad_object_id", where, name, why)
}
