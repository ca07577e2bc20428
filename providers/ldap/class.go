package ldap

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/ldapschema"
	"github.com/entitlements-go/entitlements/providers"
)

// How an OU's groups are stored: the reference's three object classes, chosen by the OU's
// plugin (groupOfUniqueNames by default, GroupOfNames, PosixGroup); object_class names them
// directly and adds Active Directory's group.
const (
	classUnique = ldapschema.GroupOfUniqueNames
	classNames  = ldapschema.GroupOfNames
	classPosix  = ldapschema.PosixGroup
	classAD     = ldapschema.Group
)

// groupSpec is an OU's choice of class, and for AD groups their groupType.
type groupSpec struct {
	class string
	// groupType is AD's groupType of the OU's groups as AD returns it (a signed 32-bit
	// decimal); "" for the other classes.
	groupType string
}

// AD's groupType bits: the scope, and the security flag (without it, a distribution group).
var adScopes = map[string]int64{"global": 0x2, "domain_local": 0x4, "universal": 0x8}

const adSecurity = -0x80000000 // 0x80000000 as AD's signed 32-bit value

// ouGroupSpec reads object_class, plugin, group_scope and group_category. The config loader
// has checked that each value is one it accepts; combinations are checked here.
func ouGroupSpec(m config.Value) (groupSpec, error) {
	fromPlugin := ""
	switch m.Get("plugin").Get("class").Text() {
	case "GroupOfNames":
		fromPlugin = classNames
	case "PosixGroup":
		fromPlugin = classPosix
	}
	spec := groupSpec{class: classUnique}
	if fromPlugin != "" {
		spec.class = fromPlugin
	}
	if v := m.Get("object_class"); v.Exists() {
		i := slices.IndexFunc([]string{classUnique, classNames, classPosix, classAD}, func(c string) bool { return strings.EqualFold(c, v.Text()) })
		if i < 0 {
			return groupSpec{}, fmt.Errorf("object_class %q is not one of groupOfUniqueNames, groupOfNames, posixGroup, group", v.Text())
		}
		spec.class = []string{classUnique, classNames, classPosix, classAD}[i]
		if fromPlugin != "" && fromPlugin != spec.class {
			return groupSpec{}, fmt.Errorf("object_class %s and plugin class %s choose different object classes; keep one", spec.class, m.Get("plugin").Get("class").Text())
		}
	}
	scope, category := m.Get("group_scope"), m.Get("group_category")
	if spec.class != classAD {
		if scope.Exists() || category.Exists() {
			return groupSpec{}, fmt.Errorf("group_scope and group_category apply to object_class: group (Active Directory) only")
		}
		return spec, nil
	}
	bits, ok := adScopes[strings.ToLower(scope.Text())]
	if !scope.Exists() {
		bits, ok = adScopes["global"], true
	}
	if !ok {
		return groupSpec{}, fmt.Errorf("group_scope %q is not one of global, domain_local, universal", scope.Text())
	}
	switch c := strings.ToLower(category.Text()); {
	case !category.Exists() || c == "security":
		bits |= adSecurity
	case c != "distribution":
		return groupSpec{}, fmt.Errorf("group_category %q is not one of security, distribution", category.Text())
	}
	spec.groupType = strconv.FormatInt(bits, 10)
	return spec, nil
}

// entryClass returns the class of an entry as the OU reads it: an OU of AD groups reads
// entries of class group; another OU reads the reference's three classes. "" marks a foreign
// entry, which the OU leaves alone.
func (s groupSpec) entryClass(e *goldap.Entry) string {
	classes := e.GetEqualFoldAttributeValues("objectClass")
	if s.class == classAD {
		if ldapschema.Has(classes, classAD) {
			return classAD
		}
		return ""
	}
	if ldapschema.Has(classes, classAD) {
		// An AD group may carry an RFC 2307 posixGroup class; it is still not ours.
		return ""
	}
	return ldapschema.LegacyClass(classes)
}

// samAccountName derives the sAMAccountName of a new AD group from its cn: the characters AD
// refuses in it ("/\[]:;|=,+*?<>@ and control characters) become '_', and it may not end
// with a period. AD's schema allows 256 characters (Windows' pre-2000 logon names, which
// legacy clients show, stop at 20: longer names still work for Kerberos, LDAP and ACLs).
func samAccountName(cn string) (string, error) {
	var b strings.Builder
	for _, r := range cn {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`"/\[]:;|=,+*?<>@`, r) {
			r = '_'
		}
		b.WriteRune(r)
	}
	name := strings.TrimRight(strings.TrimSpace(b.String()), ".")
	if name == "" {
		return "", fmt.Errorf("cn %q leaves no sAMAccountName", cn)
	}
	if n := len([]rune(name)); n > maxSAMAccountName {
		return "", fmt.Errorf("cn %q is %d characters long; an AD sAMAccountName holds at most %d", cn, n, maxSAMAccountName)
	}
	return name, nil
}

const maxSAMAccountName = 256

// samChunk bounds the names of one search for existing sAMAccountNames (the filter grows
// with them).
const samChunk = 50

// checkSAMAccountNames is ReadDesired's check of AD groups: the names the desired groups
// derive must be distinct within the target and from those claimed by other targets of the
// registry, and a group to create may not take the name of an existing object of the domain.
func (p *Provider) checkSAMAccountNames(ctx context.Context, desired []*providers.Group, st *providers.State) error {
	var problems []string
	claims := map[string]string{}  // lower-cased name → DN, this target
	creates := map[string]string{} // the same, for the groups to create
	for _, g := range desired {
		name, err := samAccountName(g.CN)
		if err != nil {
			return fmt.Errorf("%s: %w", g.DN, err) // Desire checked it
		}
		k := strings.ToLower(name)
		if other, ok := claims[k]; ok {
			problems = append(problems, fmt.Sprintf("%s and %s both derive sAMAccountName %q", other, g.DN, name))
			continue
		}
		claims[k] = g.DN
		if _, ok := st.Groups[providers.Key(g.DN)]; !ok {
			creates[k] = g.DN
		}
	}
	s := p.svc
	s.samMu.Lock()
	for k, d := range claims {
		if other, ok := s.samNames[k]; ok && other != dn.Normalize(d) {
			problems = append(problems, fmt.Sprintf("%s derives sAMAccountName %q, as %s of another OU does", d, k, other))
		}
	}
	if len(problems) == 0 {
		if s.samNames == nil {
			s.samNames = map[string]string{}
		}
		for k, d := range claims {
			s.samNames[k] = dn.Normalize(d)
		}
	}
	s.samMu.Unlock()

	if len(creates) > 0 && len(problems) == 0 {
		domain, err := s.defaultNamingContext(ctx)
		if err != nil {
			return err
		}
		names := slices.Sorted(maps.Keys(creates))
		for chunk := range slices.Chunk(names, samChunk) {
			var f strings.Builder
			f.WriteString("(|")
			for _, n := range chunk {
				f.WriteString("(sAMAccountName=" + goldap.EscapeFilter(n) + ")")
			}
			f.WriteString(")")
			req := goldap.NewSearchRequest(domain, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, 0, false,
				f.String(), []string{"sAMAccountName"}, nil)
			entries, err := s.pool.search(ctx, req, nil)
			if err != nil {
				return fmt.Errorf("looking up sAMAccountNames under %s: %w", domain, err)
			}
			for _, e := range entries {
				k := strings.ToLower(e.GetEqualFoldAttributeValue("sAMAccountName"))
				if d, ok := creates[k]; ok && !dn.Equal(d, e.DN) {
					problems = append(problems, fmt.Sprintf("new group %s would take sAMAccountName %q of %s", d, e.GetEqualFoldAttributeValue("sAMAccountName"), e.DN))
				}
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("sAMAccountName collisions (rename a group file): %s", strings.Join(problems, "; "))
	}
	return nil
}

// defaultNamingContext is the domain's naming context, from the root DSE.
func (s *ldapServer) defaultNamingContext(ctx context.Context) (string, error) {
	return s.domain.Get(ctx, "", func(ctx context.Context) (string, error) {
		var res *goldap.SearchResult
		err := s.pool.do(ctx, func(c *goldap.Conn) error {
			s.counters.Searches.Add(1)
			var err error
			res, err = c.Search(goldap.NewSearchRequest("", goldap.ScopeBaseObject, goldap.NeverDerefAliases, 0, 0, false,
				"(objectClass=*)", []string{"defaultNamingContext"}, nil))
			return err
		})
		if err != nil {
			return "", fmt.Errorf("reading the root DSE: %w", err)
		}
		if len(res.Entries) == 0 || res.Entries[0].GetAttributeValue("defaultNamingContext") == "" {
			return "", fmt.Errorf("the server's root DSE names no defaultNamingContext: is it Active Directory?")
		}
		return res.Entries[0].GetAttributeValue("defaultNamingContext"), nil
	})
}
