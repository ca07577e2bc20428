package ldap

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	goldap "github.com/go-ldap/ldap/v3"
	"golang.org/x/sync/errgroup"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/ldapschema"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/providers"
)

// Options tune the provider. Zero fields take the documented defaults.
type Options struct {
	// PoolSize is the number of bound connections per server, and so the number of paged
	// searches (base reads) that can run at once. Default 2.
	PoolSize int
	// WriteConcurrency bounds writes in flight per target. Default 4.
	WriteConcurrency int
	// PageSize for paged searches. Default 500.
	PageSize uint32
	// Getenv reads LDAP_CACERT / LDAP_DISABLE_SSL_VERIFICATION. Default os.LookupEnv.
	Getenv func(string) (string, bool)
	// Logger receives warnings about entries left alone: foreign entries in a managed OU,
	// members that map to no person, people with no entry. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.WriteConcurrency <= 0 {
		o.WriteConcurrency = 4
	}
	if o.Getenv == nil {
		o.Getenv = os.LookupEnv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Registry owns the services (one connection pool per server and identity) of a run. Build
// providers, the people loader and the ldap_group reader from one Registry so that they share
// connections and the per-run read cache. Close it at the end of the run.
type Registry struct {
	opt      Options
	mu       sync.Mutex
	services map[string]*ldapServer
}

// NewRegistry returns an empty registry.
func NewRegistry(opt Options) *Registry {
	return &Registry{opt: opt.withDefaults(), services: map[string]*ldapServer{}}
}

// Close closes every connection.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.services {
		s.pool.close()
	}
}

// Counters sums the counters of every service.
func (r *Registry) Counters() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int64{}
	for _, s := range r.services {
		for k, v := range s.counters.Snapshot() {
			out[k] += v
		}
	}
	return out
}

// ldapServer is one LDAP server and identity: a connection pool, the per-run cache of base
// reads, and the known-existence memo.
type ldapServer struct {
	cfg      connSettings
	pool     *pool
	counters *poolCounters
	bases    cache.TTL[*baseRead]
	exists   cache.Existence
	people   cache.TTL[*personMap] // person_attribute maps, by base and attribute
	// domain is AD's defaultNamingContext, read once for the sAMAccountName checks.
	domain cache.TTL[string]
	// samNames are the sAMAccountNames that the desired AD groups of this registry's targets
	// claim (lower-cased name → normalised DN): two groups of different OUs of one domain
	// must not claim the same name.
	samMu    sync.Mutex
	samNames map[string]string
}

type baseRead struct {
	missing bool
	entries []*goldap.Entry

	indexOnce sync.Once
	index     map[string]*goldap.Entry // by DN key, built on the first lookup
}

// entry returns the entry of the read whose DN has key k, or nil.
func (b *baseRead) entry(k string) *goldap.Entry {
	b.indexOnce.Do(func() {
		b.index = make(map[string]*goldap.Entry, len(b.entries))
		for _, e := range b.entries {
			b.index[dn.Normalize(e.DN)] = e
		}
	})
	return b.index[k]
}

// Counters returns the service's counters.
func (s *ldapServer) Counters() map[string]int64 { return s.counters.Snapshot() }

func (r *Registry) service(cfg connSettings) (*ldapServer, error) {
	cfg.PoolSize = r.opt.PoolSize
	cfg.PageSize = r.opt.PageSize
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.services[cfg.key()]; ok {
		return s, nil
	}
	c := &poolCounters{}
	p, err := newPool(cfg, c)
	if err != nil {
		return nil, err
	}
	s := &ldapServer{cfg: p.cfg, pool: p, counters: c}
	r.services[cfg.key()] = s
	return s, nil
}

// connConfig reads connection settings from a config map (an OU entry, the ldap_group extra,
// a people source config). Both spellings of the TLS-verification flag work, as does
// the LDAP_DISABLE_SSL_VERIFICATION environment variable.
func (r *Registry) connConfig(m config.Value) connSettings {
	get := func(k string) string { return m.Get(k).Text() }
	flag := func(k string) bool {
		b, _ := m.Get(k).AsBool()
		return b
	}
	_, envInsecure := r.opt.Getenv("LDAP_DISABLE_SSL_VERIFICATION")
	ca := get("ldap_ca_file")
	if ca == "" {
		ca, _ = r.opt.Getenv("LDAP_CACERT")
	}
	return connSettings{URI: get("ldap_uri"), BindDN: get("ldap_binddn"), Password: get("ldap_bindpw"), CAFile: ca,
		InsecureSkipVerify: envInsecure || flag("disable_ssl_verification") || flag("ldap_disable_ssl_verification"),
		StartTLS:           flag("ldap_starttls")}
}

// readBase reads every entry directly under base once per run (one paged, single-level
// search). A single-level search keeps nested OUs apart: the groups of
// ou=child,ou=parent are not groups of ou=parent. "No such object" proves the base missing;
// any other failure is an error. A successful search that found entries proves the base
// exists, but an empty one does not: 389 Directory Server answers a paged search of a base
// that does not exist with success and no entries (a plain search gets "no such object").
// So an empty answer is confirmed by one base-object lookup, unless the base is already
// known to exist. page, when set, is told the entries received so far after each page (when
// this call is the one that reads).
func (s *ldapServer) readBase(ctx context.Context, base string, page func(entries int)) (*baseRead, error) {
	return s.bases.Get(ctx, dn.Normalize(base), func(ctx context.Context) (*baseRead, error) {
		req := goldap.NewSearchRequest(base, goldap.ScopeSingleLevel, goldap.NeverDerefAliases, 0, 0, false,
			"(cn=*)", []string{"*"}, nil)
		entries, err := s.pool.search(ctx, req, page)
		if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
			return &baseRead{missing: true}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("searching %s: %w", base, err)
		}
		for _, e := range entries {
			if hasRanges(e) {
				if err := s.completeRanges(ctx, e); err != nil {
					return nil, err
				}
			}
		}
		if len(entries) == 0 && !s.exists.Exists(base) {
			e, err := s.readDN(ctx, base)
			if err != nil {
				return nil, err
			}
			if e == nil {
				return &baseRead{missing: true}, nil
			}
		}
		s.exists.Mark(base)
		return &baseRead{entries: entries}, nil
	})
}

// readDN reads one entry (base-object search, every user attribute); nil when it does not
// exist.
func (s *ldapServer) readDN(ctx context.Context, d string) (*goldap.Entry, error) {
	return s.readAttrs(ctx, d, []string{"*"})
}

// Provider manages the groups of one `ldap` OU (or a member_of target).
type Provider struct {
	svc            *ldapServer
	opt            Options
	ou             string
	base           string
	personDNFormat string
	keyAttr        string // the attribute whose value is %KEY% in person_dn_format
	// personAttr and personBase map people through an attribute (person_attribute) instead
	// of person_dn_format.
	personAttr, personBase string
	spec                   groupSpec
	createMissing          bool

	mu       sync.Mutex
	warned   map[string]bool
	warnings []string
	foreign  map[string]string // normalised DN → its classes, from the last read
}

// The capabilities the LDAP provider claims.
var (
	_ providers.Provider      = (*Provider)(nil)
	_ providers.Desirer       = (*Provider)(nil)
	_ providers.DesiredReader = (*Provider)(nil)
	_ providers.Preparer      = (*Provider)(nil)
	_ providers.PersonWriter  = (*Provider)(nil)
	_ providers.Counter       = (*Provider)(nil)
	_ providers.DeletePolicy  = (*Provider)(nil)
)

// DeletesGroups implements providers.DeletePolicy: an LDAP OU is managed whole, so a group
// without a file is deleted, as the reference does.
func (p *Provider) DeletesGroups(*providers.Target) bool { return true }

// Provider builds the provider of an OU (types ldap and member_of).
func (r *Registry) Provider(ou *config.OU) (*Provider, error) {
	if ou.PluginErr != "" {
		// Calculating never needs the plugin (as in the reference); writing the OU's groups
		// does, so its plan fails here.
		return nil, fmt.Errorf("OU %s: %s", ou.Key, ou.PluginErr)
	}
	m := ou.Settings
	cfg := r.connConfig(m)
	if cfg.URI == "" {
		return nil, fmt.Errorf("OU %s has no ldap_uri", ou.Key)
	}
	svc, err := r.service(cfg)
	if err != nil {
		return nil, err
	}
	p := &Provider{svc: svc, opt: r.opt, ou: ou.Key, base: ou.Base}
	if p.spec, err = ouGroupSpec(m); err != nil {
		return nil, fmt.Errorf("OU %s: %w", ou.Key, err)
	}
	p.personAttr, p.personBase = m.Get("person_attribute").Text(), m.Get("person_base").Text()
	switch v := m.Get("person_dn_format"); {
	case p.personAttr != "" && v.Exists():
		return nil, fmt.Errorf("OU %s sets both person_dn_format and person_attribute; keep one", ou.Key)
	case p.personAttr != "" && p.personBase == "":
		return nil, fmt.Errorf("OU %s: person_attribute needs person_base, the entry under which people are found", ou.Key)
	case p.personAttr == "" && p.personBase != "":
		return nil, fmt.Errorf("OU %s: person_base is used only with person_attribute", ou.Key)
	case v.Exists():
		p.personDNFormat = v.Text()
		p.keyAttr = keyAttr(p.personDNFormat)
	}
	p.createMissing, _ = m.Get("create_if_missing").AsBool()
	return p, nil
}

// Warnings returns what reads and writes reported and left alone (foreign entries in a
// managed OU, members that map to no person, people with no entry), each once, in order.
func (p *Provider) Warnings() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.warnings)
}

// warn reports msg once per provider (a plan followed by an apply reads twice).
func (p *Provider) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	seen := p.warned[msg]
	if !seen {
		if p.warned == nil {
			p.warned = map[string]bool{}
		}
		p.warned[msg] = true
		p.warnings = append(p.warnings, msg)
	}
	p.mu.Unlock()
	if !seen {
		p.opt.Logger.Warn(msg, "ou", p.ou)
	}
}

// Counters implements providers.Counter (the counters of the provider's server).
func (p *Provider) Counters() map[string]int64 { return p.svc.Counters() }

// Desire implements providers.Desirer: the object class, the gidNumber of a posixGroup, the
// groupType of an AD group (whose sAMAccountName must be derivable from its cn).
func (p *Provider) Desire(_ *providers.Target, g *providers.Group) error {
	g.Attrs = map[string][]string{"objectclass": {p.spec.class}}
	if p.spec.class == classAD {
		if _, err := samAccountName(g.CN); err != nil {
			return fmt.Errorf("%s: %w", g.DN, err)
		}
		g.Attrs["grouptype"] = []string{p.spec.groupType}
	}
	if p.spec.class == classPosix {
		v, ok := g.Metadata["gid_number"]
		if !ok {
			return fmt.Errorf("POSIX Group %s has no metadata setting for gid_number!", g.DN)
		}
		n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("POSIX Group %s has GID %v out of 1-65535 range!", g.DN, v)
		}
		g.Attrs["gidnumber"] = []string{strconv.Itoa(n)}
	}
	return nil
}

// Read implements providers.Provider: one search of the OU's base.
func (p *Provider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	if p.base == "" {
		return nil, fmt.Errorf("OU %s has no base", t.OU.Key)
	}
	br, err := p.svc.readBase(ctx, p.base, func(n int) { t.ReportRead(providers.ReadProgress{Groups: n}) })
	if err != nil {
		return nil, err
	}
	st := &providers.State{Groups: map[string]*providers.Group{}}
	if br.missing {
		if !p.createMissing {
			return nil, fmt.Errorf("base %s does not exist (set create_if_missing: true to create it)", p.base)
		}
		st.ContainerMissing = true
		return st, nil
	}
	var people *personMap
	if p.personAttr != "" {
		if people, err = p.svc.persons(ctx, p.personBase, p.personAttr); err != nil {
			return nil, err
		}
	}
	foreign := map[string]string{}
	for _, e := range br.entries {
		class := p.spec.entryClass(e)
		if class == "" {
			// Not a group this OU manages (an AD group in an OpenLDAP-style OU, a user or a
			// contact in an AD OU, ...): never read as one, never deleted, never written.
			classes := strings.Join(e.GetEqualFoldAttributeValues("objectClass"), ", ")
			foreign[dn.Normalize(e.DN)] = classes
			p.warn("%s is not a %s (objectClass: %s); left alone", e.DN, p.spec.class, classes)
			continue
		}
		g := p.entryGroup(e, class, people)
		st.Groups[providers.Key(g.DN)] = g
	}
	p.mu.Lock()
	p.foreign = foreign
	p.mu.Unlock()
	return st, nil
}

// ReadDesired implements providers.DesiredReader: Read, then what needs the desired groups.
// With person_attribute, a desired member with no entry under person_base cannot be written:
// it is reported and left out, so that the plan converges. For AD groups, the
// sAMAccountNames of the groups to create are checked: two desired groups (of any OU of the
// registry's domain) may not derive the same name, nor may a new group take the name of an
// existing object anywhere in the domain; a collision fails the target's plan.
func (p *Provider) ReadDesired(ctx context.Context, t *providers.Target, desired []*providers.Group) (*providers.State, error) {
	st, err := p.Read(ctx, t)
	if err != nil {
		return nil, err
	}
	if p.personAttr != "" {
		people, err := p.svc.persons(ctx, p.personBase, p.personAttr)
		if err != nil {
			return nil, err
		}
		for _, g := range desired {
			g.Members = slices.DeleteFunc(g.Members, func(m string) bool {
				if _, ok := people.dnOf(m); ok {
					return false
				}
				p.warn("%s: %s has no entry with %s=%s under %s (or more than one); not added", g.DN, m, p.personAttr, m, p.personBase)
				return true
			})
		}
	}
	if p.spec.class == classAD {
		if err := p.checkSAMAccountNames(ctx, desired, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// keyAttr returns the attribute type whose value is %KEY% in the first RDN of a
// person_dn_format ("uid" for uid=%KEY%,ou=People,...), or "".
func keyAttr(format string) string {
	d, err := dn.Parse(format)
	if err != nil || len(d) == 0 {
		return ""
	}
	for _, a := range d[0] {
		if a.Value == "%KEY%" {
			return a.Type
		}
	}
	return ""
}

// entryGroup converts an entry of the OU's class into a group. Members: the group's own DN
// is dropped (the empty-group convention); with person_attribute each member DN maps to its
// person, and one that does not map stays as its DN and is reported (a plan then shows it
// removed, never silently); otherwise each member is reduced to its first RDN value,
// unescaped (the value of keyAttr when that RDN is multi-valued).
func (p *Provider) entryGroup(e *goldap.Entry, class string, people *personMap) *providers.Group {
	g := &providers.Group{DN: e.DN, Attrs: map[string][]string{"objectclass": {class}}}
	if v := e.GetEqualFoldAttributeValues("gidNumber"); len(v) > 0 {
		g.Attrs["gidnumber"] = v
	}
	if class == classAD {
		g.Attrs["grouptype"] = e.GetEqualFoldAttributeValues("groupType")
	}
	g.CN = e.GetEqualFoldAttributeValue("cn")
	g.Description = e.GetEqualFoldAttributeValue("description")
	if g.Description == "" {
		g.Description = g.CN
	}
	self, selfErr := dn.Parse(e.DN)
	selfCN, _ := self.FirstValue("")
	for _, m := range e.GetEqualFoldAttributeValues(ldapschema.MemberAttr(class)) {
		d, err := dn.Parse(m)
		if people != nil {
			if err == nil && d.Key() == self.Key() {
				continue
			}
			if v, ok := people.byDN[dn.Normalize(m)]; ok {
				g.Members = append(g.Members, v)
				continue
			}
			p.warn("%s: member %s is no entry with %s under %s; it is shown by its DN, and a plan removes it", e.DN, m, p.personAttr, p.personBase)
			g.Members = append(g.Members, m)
			continue
		}
		if err != nil {
			g.Members = append(g.Members, dn.FirstValueOf(m, p.keyAttr))
			continue
		}
		v, ok := d.FirstValue(p.keyAttr)
		if !ok {
			v = m
		}
		// Members are parsed once; the full comparison with the group's own DN is made only
		// for the few whose first value is the group's cn.
		if selfErr == nil && strings.EqualFold(v, selfCN) && d.Key() == self.Key() {
			continue
		}
		g.Members = append(g.Members, v)
	}
	slices.Sort(g.Members)
	return g
}

// personDN expands person_dn_format for a uid (escaped for use in a DN).
func (p *Provider) personDN(uid string) string {
	return strings.ReplaceAll(p.personDNFormat, "%KEY%", dn.EscapeValue(uid))
}

// memberDN is the DN a desired member is written as: person_dn_format expanded, or the
// entry found by person_attribute (ReadDesired has left out the people without one).
func (p *Provider) memberDN(ctx context.Context, m string) (string, error) {
	if p.personAttr == "" {
		return p.personDN(m), nil
	}
	people, err := p.svc.persons(ctx, p.personBase, p.personAttr)
	if err != nil {
		return "", err
	}
	if d, ok := people.dnOf(m); ok {
		return d, nil
	}
	return "", fmt.Errorf("%s has no entry with %s=%s under %s (or more than one)", m, p.personAttr, m, p.personBase)
}

// Prepare implements providers.Preparer: create the OU entry of a missing base, and its
// missing parent OUs first, so that nested bases are created in one run whatever the order
// of their config keys.
func (p *Provider) Prepare(ctx context.Context, t *providers.Target) error {
	d, err := dn.Parse(p.base)
	if err != nil || len(d) == 0 {
		return fmt.Errorf("base %q is not a DN: %v", p.base, err)
	}
	return p.svc.ensureOU(ctx, d)
}

// ensureOU creates the organizationalUnit d unless it is known to exist. When its parent is
// missing too and is an OU, the parent is created first (recursively); other missing
// ancestors (dc=, o=) are an error: they are not ours to invent.
func (s *ldapServer) ensureOU(ctx context.Context, d dn.DN) error {
	name := d.String()
	if s.exists.Exists(name) {
		return nil
	}
	err := s.addOU(ctx, d)
	if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) && len(d) > 2 && isOU(d.Parent()[0]) {
		if perr := s.ensureOU(ctx, d.Parent()); perr != nil {
			return perr
		}
		err = s.addOU(ctx, d)
	}
	if err != nil && !goldap.IsErrorWithCode(err, goldap.LDAPResultEntryAlreadyExists) {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	s.exists.Mark(name)
	// A read of this base that found it missing (by this or another target) is stale now.
	s.bases.Invalidate(d.Key())
	return nil
}

func isOU(r dn.RDN) bool {
	return slices.ContainsFunc(r, func(a dn.AVA) bool { return strings.EqualFold(a.Type, "ou") })
}

// addOU adds d as an organizationalUnit carrying its RDN's values.
func (s *ldapServer) addOU(ctx context.Context, d dn.DN) error {
	req := goldap.NewAddRequest(d.String(), nil)
	req.Attribute("objectClass", []string{"organizationalUnit"})
	for _, a := range d[0] {
		req.Attribute(a.Type, []string{a.Value})
	}
	return s.pool.do(ctx, func(c *goldap.Conn) error {
		s.counters.Adds.Add(1)
		return c.Add(req)
	})
}

// Apply implements providers.Provider: one LDAP operation per change (no pre-reads: the
// state is known from Read), several in flight.
func (p *Provider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := make([]providers.Outcome, len(changes))
	var eg errgroup.Group
	eg.SetLimit(p.opt.WriteConcurrency)
	for i, c := range changes {
		eg.Go(func() error {
			out[i] = p.apply(ctx, c)
			return nil
		})
	}
	eg.Wait()
	p.svc.bases.Invalidate(dn.Normalize(p.base))
	return out
}

func (p *Provider) apply(ctx context.Context, c *providers.Change) providers.Outcome {
	if err := ctx.Err(); err != nil {
		return providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("not applied: %w", err)}
	}
	var err error
	status := providers.Applied
	switch c.Kind {
	case providers.CreateGroup:
		p.mu.Lock()
		classes, foreign := p.foreign[dn.Normalize(c.DN)]
		p.mu.Unlock()
		if foreign {
			err = fmt.Errorf("%s is an entry this OU does not manage (objectClass: %s); left alone", c.DN, classes)
			break
		}
		var req *goldap.AddRequest
		if req, err = p.addRequest(ctx, c.Desired); err != nil {
			break
		}
		err = p.svc.pool.do(ctx, func(conn *goldap.Conn) error {
			p.svc.counters.Adds.Add(1)
			return conn.Add(req)
		})
		if goldap.IsErrorWithCode(err, goldap.LDAPResultEntryAlreadyExists) {
			// Created meanwhile (or by an attempt whose answer was lost): make it right.
			err = p.modify(ctx, c.Desired, nil)
		}
	case providers.UpdateGroup:
		err = p.modify(ctx, c.Desired, c)
	case providers.DeleteGroup:
		err = p.svc.pool.do(ctx, func(conn *goldap.Conn) error {
			p.svc.counters.Deletes.Add(1)
			return conn.Del(goldap.NewDelRequest(c.DN, nil))
		})
		if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
			err, status = nil, providers.AlreadyInState
		}
		if err == nil {
			p.svc.exists.Forget(c.DN)
		}
	default:
		err = fmt.Errorf("the LDAP provider cannot apply %s changes", c.Kind)
	}
	if err != nil {
		st := providers.Failed
		if isNetwork(err) {
			st = providers.Unknown
		}
		return providers.Outcome{Change: c, Status: st, Err: err}
	}
	return providers.Outcome{Change: c, Status: status}
}

// memberValues are the member attribute values of a group. An empty groupOfUniqueNames or
// groupOfNames holds its own DN (the schema requires a member); an empty posixGroup or AD
// group holds nothing (AD refuses a member that is not an object: "Unable to find GUID").
// posixGroup memberUid values are person DNs, as the reference writes.
func (p *Provider) memberValues(ctx context.Context, g *providers.Group) ([]string, error) {
	out := make([]string, 0, len(g.Members))
	for _, m := range g.Members {
		d, err := p.memberDN(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if len(out) == 0 && (p.spec.class == classUnique || p.spec.class == classNames) {
		out = append(out, g.DN)
	}
	return out, nil
}

func (p *Provider) addRequest(ctx context.Context, g *providers.Group) (*goldap.AddRequest, error) {
	req := goldap.NewAddRequest(g.DN, nil)
	req.Attribute("objectClass", []string{p.spec.class})
	req.Attribute("cn", []string{g.CN})
	if g.Description != "" {
		req.Attribute("description", []string{g.Description})
	}
	switch bind := p.svc.cfg.BindDN; {
	case p.spec.class == classAD:
		name, err := samAccountName(g.CN)
		if err != nil {
			return nil, err
		}
		req.Attribute("sAMAccountName", []string{name})
		req.Attribute("groupType", []string{p.spec.groupType})
		// AD's owner is managedBy, a reference to an object: a bind name such as
		// user@domain or DOMAIN\user names none.
		if _, err := dn.Parse(bind); err == nil && strings.Contains(bind, "=") {
			req.Attribute("managedBy", []string{bind})
		}
	case p.spec.class != classPosix && bind != "":
		req.Attribute("owner", []string{bind})
	}
	v, err := p.memberValues(ctx, g)
	if err != nil {
		return nil, err
	}
	if len(v) > 0 {
		req.Attribute(ldapschema.MemberAttr(p.spec.class), v)
	}
	if gid := g.Attrs["gidnumber"]; len(gid) > 0 {
		req.Attribute("gidNumber", gid)
	}
	return req, nil
}

// modify replaces the member attribute and the description in one request (idempotent, so a
// retry after a broken connection cannot do harm).
func (p *Provider) modify(ctx context.Context, g *providers.Group, c *providers.Change) error {
	if c != nil && slices.Contains(c.AttrsChanged, "objectclass") {
		return fmt.Errorf("%s: changing the object class from %v to %v needs the group to be deleted and recreated; do it by hand",
			g.DN, c.Current.Attrs["objectclass"], g.Attrs["objectclass"])
	}
	memberAttr := ldapschema.MemberAttr(p.spec.class)
	req := goldap.NewModifyRequest(g.DN, nil)
	vals, err := p.memberValues(ctx, g)
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		if c == nil || (c.Current != nil && len(c.Current.Members) > 0) || len(c.Remove) > 0 {
			req.Replace(memberAttr, nil)
		}
	} else {
		req.Replace(memberAttr, vals)
	}
	if c == nil || c.DescriptionChanged {
		req.Replace("description", []string{g.Description})
	}
	for _, a := range [][2]string{{"gidnumber", "gidNumber"}, {"grouptype", "groupType"}} {
		if v := g.Attrs[a[0]]; len(v) > 0 && (c == nil || slices.Contains(c.AttrsChanged, a[0])) {
			req.Replace(a[1], v)
		}
	}
	if len(req.Changes) == 0 {
		return nil
	}
	return p.svc.pool.do(ctx, func(conn *goldap.Conn) error {
		p.svc.counters.Modifies.Add(1)
		return conn.Modify(req)
	})
}

// WritePeople implements providers.PersonWriter (member_of): one Modify per person.
func (p *Provider) WritePeople(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := make([]providers.Outcome, len(changes))
	var eg errgroup.Group
	eg.SetLimit(p.opt.WriteConcurrency)
	for i, c := range changes {
		eg.Go(func() error {
			req := goldap.NewModifyRequest(p.personDN(c.Person), nil)
			if len(c.Values) == 0 {
				req.Delete(c.Attribute, nil)
			} else {
				req.Replace(c.Attribute, c.Values)
			}
			err := p.svc.pool.do(ctx, func(conn *goldap.Conn) error {
				p.svc.counters.Modifies.Add(1)
				return conn.Modify(req)
			})
			switch {
			case err == nil:
				out[i] = providers.Outcome{Change: c, Status: providers.Applied}
			case goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchAttribute):
				out[i] = providers.Outcome{Change: c, Status: providers.AlreadyInState}
			case isNetwork(err):
				out[i] = providers.Outcome{Change: c, Status: providers.Unknown, Err: err}
			default:
				out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: err}
			}
			return nil
		})
	}
	eg.Wait()
	return out
}

// PeopleLoader reads an `ldap` people source: one paged subtree search of `base` for
// `(<uid_attribute>=*)`. The uid is the first RDN value of each entry's DN; attributes are
// `additional_attributes` (default [cn]) with lower-case names.
func (r *Registry) PeopleLoader() func(ctx context.Context, src *config.PeopleSource) ([]people.Person, error) {
	return func(ctx context.Context, src *config.PeopleSource) ([]people.Person, error) {
		if src.Type != "ldap" {
			return nil, fmt.Errorf("people source type %q is not supported", src.Type)
		}
		m := src.Config
		if !m.Get("base").Exists() || !m.Get("ldap_uri").Exists() {
			return nil, fmt.Errorf("an ldap people source needs config.base and config.ldap_uri")
		}
		svc, err := r.service(r.connConfig(m))
		if err != nil {
			return nil, err
		}
		uidAttr := "uid"
		if v := m.Get("uid_attribute").Text(); v != "" {
			uidAttr = v
		}
		attrs := []string{"cn"}
		if v := m.Get("additional_attributes"); v.IsList() {
			attrs = attrs[:0]
			for _, it := range v.Items() {
				attrs = append(attrs, strings.ToLower(it.Text()))
			}
		}
		req := goldap.NewSearchRequest(m.Get("base").Text(), goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, 0, false,
			"("+goldap.EscapeFilter(uidAttr)+"=*)", attrs, nil)
		entries, err := svc.pool.search(ctx, req, nil)
		if err != nil {
			// Never "zero people": that would empty every group.
			return nil, fmt.Errorf("reading people from %s: %w", m.Get("base").Text(), err)
		}
		out := make([]people.Person, 0, len(entries))
		for _, e := range entries {
			p := people.Person{UID: dn.FirstValueOf(e.DN, uidAttr), Attrs: map[string]any{}}
			for _, a := range attrs {
				vals := e.GetEqualFoldAttributeValues(a)
				slices.Sort(vals)
				p.Attrs[a] = vals
			}
			out = append(out, p)
		}
		return out, nil
	}
}

// GroupReader reads the unmanaged groups that ldap_group rules and MemberOfLDAPGroup filters
// name, with the connection settings of the ldap_group extra (package ldapcalc adapts it to
// calc.LDAPGroupReader; providers do not depend on the calculator). Groups under a base that this run
// already read come from that read (the state before this run's changes, as in the
// reference); others are read with one base-object search each, several at once.
type GroupReader struct {
	r        *Registry
	settings config.Value
}

// GroupReader returns the reader for LDAP connection settings such as those of the
// ldap_group extra (cfg.LDAPGroup; GroupReaderFor checks that the extra is configured).
func (r *Registry) GroupReader(settings config.Value) *GroupReader {
	return &GroupReader{r: r, settings: settings}
}

// ReadGroups returns, for each DN that exists, its attributes (lower-case names) keyed by the
// DN as asked.
func (g *GroupReader) ReadGroups(ctx context.Context, dns []string) (map[string]map[string][]string, error) {
	svc, err := g.r.service(g.r.connConfig(g.settings))
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	out := map[string]map[string][]string{}
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(4)
	for _, d := range dns {
		eg.Go(func() error {
			e, err := g.lookup(ctx, svc, d)
			if err != nil || e == nil {
				return err
			}
			lg := map[string][]string{}
			for _, a := range e.Attributes {
				lg[strings.ToLower(a.Name)] = a.Values
			}
			mu.Lock()
			out[d] = lg
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (g *GroupReader) lookup(ctx context.Context, svc *ldapServer, d string) (*goldap.Entry, error) {
	if parent, ok := dn.ParentKey(d); ok {
		if br, ok := svc.bases.Peek(parent); ok && !br.missing {
			if e := br.entry(dn.Normalize(d)); e != nil {
				return e, nil
			}
			return nil, nil
		}
	}
	return svc.readDN(ctx, d)
}
