package calc

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/validate"
)

// fileCase is one definition file under test: ldap-config/a/<file> (x.txt unless named) in the
// default repository, plus optional extra files, evaluated as group a/x.
type fileCase struct {
	name  string
	file  string // file name in OU a (default x.txt)
	body  string
	extra map[string]string
	cfg   *conf
	now   time.Time
	opt   Options

	want []string // members of a/x (nil: empty group), when no error is expected
	desc string   // expected description ("" = not checked)
	meta map[string]any
	// errs are the expected errors; an empty Path means the file under test.
	errs []errSpec
}

const xPath = "ldap-config/a/x.txt"

func runFileCases(t *testing.T, cases []fileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := c.file
			if file == "" {
				file = "x.txt"
			}
			files := map[string]string{"ldap-config/a/" + file: c.body}
			maps.Copy(files, c.extra)
			if c.cfg != nil {
				files["config.yaml"] = c.cfg.String()
			}
			opt := c.opt
			if !c.now.IsZero() {
				opt.Now = c.now
			}
			res, errs := run(t, files, opt)
			if len(c.errs) > 0 {
				if errs == nil {
					t.Fatalf("succeeded with a/x = %q; want errors %v", res.Group("a/x").Members, c.errs)
				}
				want := make([]errSpec, len(c.errs))
				for i, e := range c.errs {
					if e.Path == "" {
						e.Path = "ldap-config/a/" + file
					}
					want[i] = e
				}
				wantErrs(t, errs, want...)
				return
			}
			if errs != nil {
				t.Fatalf("unexpected errors:\n%v", errs)
			}
			wantMembers(t, res, "a/x", c.want...)
			g := res.Group("a/x")
			if c.desc != "" && g.Description != c.desc {
				t.Errorf("description %q, want %q", g.Description, c.desc)
			}
			if c.meta != nil && !reflect.DeepEqual(g.Metadata, c.meta) {
				t.Errorf("metadata %#v, want %#v", g.Metadata, c.meta)
			}
		})
	}
}

func e(kind validate.Kind, line int, msg ...string) errSpec {
	s := errSpec{Kind: kind, Line: line}
	if len(msg) > 0 {
		s.Msg = msg[0]
	}
	return s
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestTxtLines(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "CRLF line ends", body: "description = Hello\r\nusername = bob\r\n\r\n# note\r\nusername = alice\r\n",
			want: []string{"alice", "bob"}, desc: "Hello"},
		{name: "tabs and blanks around everything", body: "\tusername\t=\tbob\t\n \t# comment\n\t\n   username   =   alice   \n",
			want: []string{"alice", "bob"}},
		{name: "key=value without blanks", body: "username=bob\nusername=alice\nusername!=alice\n", want: []string{"bob"}},
		{name: "key is case-sensitive", body: "Username = bob\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 1, `"Username"`)}},
		{name: "value containing = in description", body: "description = a = b\nusername = bob\n",
			want: []string{"bob"}, desc: "a = b"},
		{name: "value containing = in metadata", body: "metadata_x = k=v\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"x": "k=v"}},
		{name: "username == bob matches nobody", body: "username == bob\n", want: nil},
		{name: "username == bob next to a real line", body: "username == bob\nusername = alice\n", want: []string{"alice"}},
		{name: "username is case-insensitive and canonicalised", body: "username = CAROL\nusername = Alice\n",
			want: []string{"Carol", "alice"}},
		{name: "unknown username matches nobody", body: "username = nobody\nusername = bob\n", want: []string{"bob"}},
		{name: "trailing comment stripped from rules", body: "username = bob # the builder\nusername = alice#no blank\n",
			want: []string{"alice", "bob"}},
		{name: "comment-only value is empty and matches nobody", body: "username = # nobody\nusername = bob\n",
			want: []string{"bob"}},
		{name: "trailing comment kept in description", body: "description = Team X; the best # still here\nusername = bob\n",
			want: []string{"bob"}, desc: "Team X; the best # still here"},
		{name: "trailing comment stripped from metadata", body: "metadata_team = core # owning team\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"team": "core"}},
		{name: "metadata key with dash", body: "metadata_review-completed-last = 2024-01-01\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"review-completed-last": "2024-01-01"}},
		{name: "metadata with trailing semicolon", body: "metadata_x = v;\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"x": "v"}},
		{name: "metadata with trailing semicolons and blanks", body: "metadata_x = v ; ; \nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"x": "v"}},
		{name: "metadata with an empty field before more text", body: "metadata_x = v;;y = z\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1)}},
		// Ruby's strip and \s are ASCII-only: a no-break space is part of the value.
		{name: "trailing no-break space is part of the value", body: "username = bob\u00a0\nusername = alice\n", want: []string{"alice"}},
		{name: "no-break space before a comment is part of the value", body: "username = bob\u00a0# x\nusername = alice\n", want: []string{"alice"}},
		// The reference strips a trailing NUL; a control character in a group file is refused
		// instead (issue 10, COMPATIBILITY.md).
		{name: "NUL at the end of a line is refused", body: "username = bob\x00\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "control character U+0000")}},
		{name: "NUL inside a value is refused", body: "description = a\x00b\nusername = bob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "control character U+0000")}},
		{name: "escape character on line 2 is refused", body: "username = bob\nusername = al\x1bice\n",
			errs: []errSpec{e(validate.KindTextFile, 2, "control character U+001B")}},
		{name: "C1 control is refused", body: "username = bob\u0085\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "control character U+0085")}},
		{name: "lone carriage return is refused", body: "username = b\rob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "control character U+000D")}},
		{name: "CRLF line ends are fine", body: "username = bob\r\nusername = alice\r\n", want: []string{"alice", "bob"}},
		{name: "description missing falls back to cn", body: "username = bob\n", want: []string{"bob"}, desc: "x"},
		{name: "comments and blank lines only before rules", body: "# a\n\n   # b\nusername = bob\n", want: []string{"bob"}},
	})
}

func TestTxtUnparseable(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "colon instead of =", body: "description: x\nusername = bob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable line")}},
		{name: "empty value", body: "username = bob\nusername =\n",
			errs: []errSpec{e(validate.KindTextFile, 2, "Unparseable line")}},
		{name: "empty value with blanks", body: "username =   \t\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable line")}},
		{name: "dot in key", body: "a.b = c\n", errs: []errSpec{e(validate.KindTextFile, 1)}},
		{name: "no key", body: "= bob\n", errs: []errSpec{e(validate.KindTextFile, 1)}},
		{name: "unknown operator", body: "username ~= bob\n", errs: []errSpec{e(validate.KindTextFile, 1)}},
		{name: "operator with blank inside", body: "username ! = bob\n", errs: []errSpec{e(validate.KindTextFile, 1)}},
		{name: "leading no-break space", body: "username = bob\n\u00a0username = alice\n",
			errs: []errSpec{e(validate.KindTextFile, 2, "Unparseable line")}},
		{name: "line of a no-break space", body: "username = bob\n\u00a0\n",
			errs: []errSpec{e(validate.KindTextFile, 2, "Unparseable line")}},
		{name: "every unparseable line reported", body: "x\nusername = bob\ny z\n",
			errs: []errSpec{e(validate.KindTextFile, 1), e(validate.KindTextFile, 3)}},
		{name: "description with empty value", body: "description =\nusername = bob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable line")}},
	})
}

func TestTxtSemicolonPredicates(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "trailing semicolon is harmless", body: "username = bob;\nusername = alice ;\n", want: []string{"alice", "bob"}},
		{name: "several trailing semicolons", body: "username = bob;;\n", want: []string{"bob"}},
		// Ruby splits on /\s*;\s*/ and drops trailing empty fields, so "; ;" at the end is harmless.
		{name: "trailing semicolons separated by a blank", body: "username = bob; ;\n", want: []string{"bob"}},
		{name: "trailing semicolon after a predicate", body: "username = bob ; expiration = 2099-01-01 ;\n", want: []string{"bob"}},
		{name: "predicate with and without blanks", body: "username = bob;expiration=2099-01-01\nusername = alice ; expiration = 2099-01-01\nusername = dave;expiration=2020-01-01\n",
			want: []string{"alice", "bob"}},
		{name: "predicate followed by a comment", body: "username = bob; expiration = 2020-01-01 # gone\nusername = alice\n",
			want: []string{"alice"}},
		{name: "repeated expiration: the last one wins (future)", body: "username = bob; expiration = 2020-01-01; expiration = 2099-01-01\n",
			want: []string{"bob"}},
		{name: "repeated expiration: the last one wins (past)", body: "username = alice\nusername = bob; expiration = 2099-01-01; expiration = 2020-01-01\n",
			want: []string{"alice"}},
		{name: "empty part between semicolons", body: "username = bob;;expiration=2099-01-01\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable semicolon predicate")}},
		{name: "unknown predicate word", body: "username = bob; expires = 2099-01-01\n",
			errs: []errSpec{e(validate.KindTextFile, 1, `Invalid semicolon predicate "expires"`)}},
		{name: "predicate word is case-sensitive", body: "username = bob; Expiration = 2099-01-01\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Invalid semicolon predicate")}},
		{name: "predicate without =", body: "username = bob; expiration\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable semicolon predicate")}},
		{name: "predicate date with blanks", body: "username = bob; expiration = 2099 01 01\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable semicolon predicate")}},
		{name: "predicate date with a vertical tab", body: "username = bob; expiration = 2099-01-01\v1\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "control character U+000B")}},
		{name: "trailing field of a no-break space is not empty", body: "username = bob;\u00a0\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "Unparseable semicolon predicate")}},
		{name: "predicate on a filter line is checked too", body: "username = bob\ncontractors = all; foo = bar\n",
			cfg:  &conf{Filters: contractorsFilter},
			errs: []errSpec{e(validate.KindTextFile, 2, "Invalid semicolon predicate")}},
		{name: "semicolon kept verbatim in description", body: "description = a; expiration = 2020-01-01\nusername = bob\n",
			want: []string{"bob"}, desc: "a; expiration = 2020-01-01"},
	})
}

func TestTxtLineDates(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "short month", body: "username = bob; expiration = 2099-1-01\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "compact date is not allowed per line", body: "username = bob; expiration = 20990101\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "month 13", body: "username = bob; expiration = 2099-13-01\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "month 00", body: "username = bob; expiration = 2099-00-10\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "day 00", body: "username = bob; expiration = 2099-01-00\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "day 32", body: "username = bob; expiration = 2099-01-32\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "bad date on a != line", body: "username = bob\nusername != alice; expiration = soon\n",
			errs: []errSpec{e(validate.KindExpirationDate, 2)}},
		{name: "bad date on a &= line", body: "username = bob\nusername &= bob; expiration = 2099/01/01\n",
			errs: []errSpec{e(validate.KindExpirationDate, 2)}},
		{name: "bad date on a filter line", body: "username = bob\ncontractors = all; expiration = 1.1.2099\n",
			cfg: &conf{Filters: contractorsFilter}, errs: []errSpec{e(validate.KindExpirationDate, 2)}},
		// 2099-02-30 rolls over to 2099-03-02.
		{name: "rollover: not reached the day before", body: "username = bob; expiration = 2099-02-30\nusername = alice\n",
			now: date("2099-03-01"), want: []string{"alice", "bob"}},
		{name: "rollover: reached on the rolled-over day", body: "username = bob; expiration = 2099-02-30\nusername = alice\n",
			now: date("2099-03-02"), want: []string{"alice"}},
		{name: "rollover in a leap year", body: "username = bob; expiration = 2024-02-30\nusername = alice\n",
			now: date("2024-02-29"), want: []string{"alice", "bob"}},
		{name: "rollover in a leap year, reached", body: "username = bob; expiration = 2024-02-30\nusername = alice\n",
			now: date("2024-03-01"), want: []string{"alice"}},
		{name: "year 1 is a date, long expired", body: "username = bob; expiration = 0001-01-01\nusername = alice\n",
			want: []string{"alice"}},
		{name: "day 31 of a 30-day month rolls over", body: "username = bob; expiration = 2024-06-31\nusername = alice\n",
			now: date("2024-06-30"), want: []string{"alice", "bob"}},
	})
}

func TestTxtDescription(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "duplicated", body: "description = a\nusername = bob\ndescription = b\n",
			errs: []errSpec{e(validate.KindTextFile, 3, "description key is duplicated")}},
		{name: "not equal", body: "description != a\nusername = bob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "'!='")}},
		{name: "lone &=", body: "description &= a\nusername = bob\n",
			errs: []errSpec{e(validate.KindTextFile, 1, "duplicated")}},
		{name: "description with a semicolon and hash", body: "description = x;y#z\nusername = bob\n",
			want: []string{"bob"}, desc: "x;y#z"},
		{name: "description keeps inner blanks, trims the ends", body: "description =   two  words   \nusername = bob\n",
			want: []string{"bob"}, desc: "two  words"},
	})
}

func TestTxtMetadata(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "values are strings", body: "metadata_gid_number = 12345\nmetadata_flag = true\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"gid_number": "12345", "flag": "true"}},
		{name: "bare metadata_ key", body: "metadata_ = x\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, `"metadata_"`)}},
		{name: "repeated", body: "metadata_x = 1\nusername = bob\nmetadata_x = 2\n",
			errs: []errSpec{e(validate.KindMetadata, 3, "metadata_x is repeated")}},
		{name: "not equal", body: "metadata_x != 1\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, "'!='")}},
		// A lone "&=" counts as no "=" line in the reference; next to one it is ignored.
		{name: "lone and-equal is no line", body: "metadata_x &= 1\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, "is repeated")}},
		{name: "and-equal next to equal is ignored", body: "metadata_x = 1\nmetadata_x &= 2\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{"x": "1"}},
		{name: "no value before a semicolon", body: "metadata_x = ;\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, "no value")}},
		{name: "expiration predicate", body: "metadata_x = 1; expiration = 2099-01-01\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, `additional setting(s) "expiration"`)}},
		{name: "modifier keys other than expiration are ignored", body: "modifier_foo = bar\nusername = bob\n",
			want: []string{"bob"}, meta: map[string]any{}},
		{name: "bare modifier_ key", body: "modifier_ = x\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1)}},
	})
}

func TestTxtFileExpiration(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "future, dashed", body: "expiration = 2099-01-01\nusername = bob\n", want: []string{"bob"}, meta: map[string]any{}},
		{name: "future, compact", body: "expiration = 20990101\nusername = bob\n", want: []string{"bob"}},
		{name: "future, YYYY-MMDD", body: "expiration = 2099-0101\nusername = bob\n", want: []string{"bob"}},
		{name: "future, YYYYMM-DD", body: "expiration = 209901-01\nusername = bob\n", want: []string{"bob"}},
		{name: "long form modifier_expiration", body: "modifier_expiration = 2020-01-01\nusername = bob\n",
			want: nil, meta: map[string]any{"no_members_ok": true}},
		{name: "past with members: empty and no_members_ok", body: "expiration = 2020-01-01\nusername = bob\n",
			want: nil, meta: map[string]any{"no_members_ok": true}},
		{name: "past, compact", body: "expiration = 20200101\nusername = bob\n", want: nil},
		{name: "year 1", body: "expiration = 0001-01-01\nusername = bob\n", want: nil, meta: map[string]any{"no_members_ok": true}},
		{name: "past with no members: no flag", body: "expiration = 2020-01-01\nusername = nobody\n",
			want: nil, meta: map[string]any{}},
		{name: "expired file whose lines all expired is empty", body: "expiration = 2020-01-01\nusername = bob; expiration = 2020-01-01\n",
			want: nil, meta: map[string]any{}},
		{name: "expired file with only != lines is empty", body: "expiration = 2020-01-01\nusername != bob\n", want: nil},
		{name: "expired file with only &= lines is empty", body: "expiration = 2024-06-15\nusername &= bob\n", want: nil},
		{name: "all lines expired but file not expired", body: "expiration = 2099-01-01\nusername = bob; expiration = 2020-01-01\n",
			errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "impossible calendar date", body: "expiration = 2099-02-30\nusername = bob\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "month 13", body: "expiration = 2099-13-01\nusername = bob\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "slashes", body: "username = bob\nexpiration = 01/01/2099\n",
			errs: []errSpec{e(validate.KindExpirationDate, 2)}},
		{name: "word", body: "expiration = tomorrow\nusername = bob\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		// the date is validated even when the group is empty.
		{name: "invalid date on an empty group (Q-18)", body: "expiration = 2099-02-30\nusername = nobody\n",
			errs: []errSpec{e(validate.KindExpirationDate, 1)}},
		{name: "repeated", body: "expiration = 2099-01-01\nusername = bob\nexpiration = 2099-01-02\n",
			errs: []errSpec{e(validate.KindMetadata, 3, "modifier_expiration is repeated")}},
		{name: "not equal", body: "expiration != 2099-01-01\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, "modifier_expiration")}},
		{name: "with a predicate", body: "expiration = 2099-01-01; expiration = 2099-01-01\nusername = bob\n",
			errs: []errSpec{e(validate.KindMetadata, 1, "additional setting")}},
	})
}

func TestTxtOperators(t *testing.T) {
	lib := map[string]string{"ldap-config/b/y.txt": "username = dave\n"}
	runFileCases(t, []fileCase{
		{name: "= lines are OR-ed", body: "username = bob\nusername = alice\ngroup = b/y\n", extra: lib,
			want: []string{"alice", "bob", "dave"}},
		{name: "duplicate lines add nothing twice", body: "username = bob\nusername = bob\nusername = BOB\n", want: []string{"bob"}},
		{name: "single &=", body: "management = alice\nmanagement &= bob\n", want: []string{"bob", "dave"}},
		{name: "several &= are OR-ed, then required", body: "management = boss\nusername &= bob\nusername &= eve\n",
			want: []string{"bob", "eve"}},
		{name: "&= of somebody not in the = set", body: "username = bob\nusername &= alice\n", want: nil},
		{name: "single !=", body: "management = alice\nusername != bob\n", want: []string{"Carol", "alice", "dave"}},
		{name: "several != all subtract", body: "management = alice\nusername != bob\nmanagement != bob\n",
			want: []string{"Carol", "alice"}},
		{name: "&= and != together", body: "management = boss\nmanagement &= alice\nusername != bob\n",
			want: []string{"Carol", "alice", "dave"}},
		{name: "!= of a group", body: "management = alice\ngroup != b/y\n", extra: lib, want: []string{"Carol", "alice", "bob"}},
		{name: "only != lines", body: "username != bob\n", errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "only &= lines", body: "username &= bob\n", errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "empty file", body: "", errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "comments only", body: "# nothing\n", errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "description only", body: "description = d\n", errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "expired &= widens (Q-05b)", body: "management = alice\nusername &= bob; expiration = 2020-01-01\n",
			want: []string{"Carol", "alice", "bob", "dave"}},
		{name: "live &= next to an expired one", body: "management = alice\nusername &= bob; expiration = 2020-01-01\nusername &= dave\n",
			want: []string{"dave"}},
		{name: "expired != widens", body: "username = bob\nusername = alice\nusername != bob; expiration = 2020-01-01\n",
			want: []string{"alice", "bob"}},
		{name: "expired = line drops its members", body: "username = bob; expiration = 2024-06-15\nusername = alice\n",
			want: []string{"alice"}},
		{name: "all lines expired, no file expiration", body: "username = bob; expiration = 2020-01-01\n",
			errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "no_conditions_ok exactly true", body: "metadata_no_conditions_ok = true\nusername != bob\n",
			want: nil, meta: map[string]any{"no_conditions_ok": "true"}},
		{name: "no_conditions_ok with nothing else", body: "metadata_no_conditions_ok = true\n", want: nil},
		{name: "no_conditions_ok True does not count", body: "metadata_no_conditions_ok = True\nusername != bob\n",
			errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "no_conditions_ok yes does not count", body: "metadata_no_conditions_ok = yes\nusername != bob\n",
			errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "no_conditions_ok false", body: "metadata_no_conditions_ok = false\n",
			errs: []errSpec{e(validate.KindNoConditions, 0)}},
		{name: "no_conditions_ok with an expired = line", body: "metadata_no_conditions_ok = true\nusername = bob; expiration = 2020-01-01\n",
			want: nil},
	})
}

func TestTxtMethods(t *testing.T) {
	lib := map[string]string{"ldap-config/b/y.txt": "username = dave\n"}
	runFileCases(t, []fileCase{
		{name: "unknown method", body: "username = bob\nfoo = bar\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 2, `"foo"`)}},
		{name: "unknown method on an expired line", body: "username = bob\nfoo = bar; expiration = 2020-01-01\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 2)}},
		{name: "contractor is refused", body: "username = bob\ncontractor = bob\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 2, "contractor is not a valid function")}},
		{name: "alias entitlements_group", body: "entitlements_group = b/y\nusername = bob\n", extra: lib,
			want: []string{"bob", "dave"}},
		{name: "rule keywords are not methods", body: "always = false\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 1)}},
		{name: "management without the orgchart extra", body: "management = alice\n", cfg: &conf{NoOrgchart: true},
			errs: []errSpec{e(validate.KindMethodNotAllowed, 1, `"management"`)}},
		{name: "ldap_group without the extra", body: "ldap_group = cn=x,dc=example\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 1)}},
		{name: "direct_report", body: "direct_report = alice\n", want: []string{"Carol", "alice", "bob"}},
		{name: "direct_report is case-insensitive", body: "direct_report = ALICE\n", want: []string{"Carol", "alice", "bob"}},
	})
}

func TestTxtFilterLines(t *testing.T) {
	withF := &conf{Filters: contractorsFilter}
	lib := map[string]string{"ldap-config/lib/contractors.txt": "username = mallory\nusername = eve\n"}
	runFileCases(t, []fileCase{
		{name: "default none removes the population", body: "username = mallory\nusername = bob\n", cfg: withF, extra: lib,
			want: []string{"bob"}},
		{name: "shorthand all", body: "username = mallory\nusername = bob\ncontractors = all\n", cfg: withF, extra: lib,
			want: []string{"bob", "mallory"}},
		{name: "long form all", body: "username = mallory\nusername = bob\nfilter_contractors = all\n", cfg: withF, extra: lib,
			want: []string{"bob", "mallory"}},
		{name: "explicit none", body: "username = mallory\nusername = bob\ncontractors = none\n", cfg: withF, extra: lib,
			want: []string{"bob"}},
		{name: "list with a username in another case", body: "username = mallory\nusername = eve\nusername = bob\ncontractors = MALLORY\n",
			cfg: withF, extra: lib, want: []string{"bob", "mallory"}},
		{name: "list with an unknown username is harmless", body: "username = mallory\nusername = bob\ncontractors = nobody\n",
			cfg: withF, extra: lib, want: []string{"bob"}},
		{name: "list entries from several lines", body: "username = mallory\nusername = eve\ncontractors = eve\nfilter_contractors = mallory\n",
			cfg: withF, extra: lib, want: []string{"eve", "mallory"}},
		{name: "expired all next to a name", body: "username = mallory\nusername = eve\ncontractors = all; expiration = 2020-01-01\ncontractors = eve\n",
			cfg: withF, extra: lib, want: []string{"eve"}},
		{name: "all entries expired: default none", body: "username = mallory\nusername = bob\ncontractors = all; expiration = 2020-01-01\n",
			cfg: withF, extra: lib, want: []string{"bob"}},
		{name: "and-equal on a filter line is ignored", body: "username = mallory\nusername = bob\ncontractors &= all\n",
			cfg: withF, extra: lib, want: []string{"bob"}},
		{name: "ALL in capitals is a username, not the keyword", body: "username = mallory\nusername = bob\ncontractors = ALL\n",
			cfg: withF, extra: lib, want: []string{"bob"}},
		{name: "bare filter_ key", body: "username = bob\nfilter_ = all\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindFilter, 2, `"filter_"`)}},
		{name: "long form of an unknown filter", body: "username = bob\nfilter_vendors = all\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindFilter, 2, "filter_vendors")}},
		{name: "short form of an unknown filter is an unknown method", body: "username = bob\nvendors = all\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindMethodNotAllowed, 2)}},
		{name: "not equal", body: "username = bob\ncontractors != bob\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindFilter, 2, "'!='")}},
		{name: "all with another entry", body: "username = bob\ncontractors = all\ncontractors = bob\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindFilter, -1, "multiple entries")}},
		{name: "shorthand and long form both count", body: "username = bob\ncontractors = none\nfilter_contractors = all\n", cfg: withF, extra: lib,
			errs: []errSpec{e(validate.KindFilter, -1, "multiple entries")}},
		{name: "filter line without a filter configured", body: "username = bob\ncontractors = all\n",
			errs: []errSpec{e(validate.KindMethodNotAllowed, 2)}},
	})
}

// TestTxtFilterAndWarning: an ignored `&=` on a filter line produces a warning at its line.
func TestTxtFilterAndWarning(t *testing.T) {
	repo, _, err := loadRepo(t, map[string]string{
		"config.yaml":                     conf{Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		xPath:                             "username = bob\ncontractors &= all\n",
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range repo.Warnings() {
		if w.Path == xPath && w.Line == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning at %s:2; warnings: %q", xPath, warningsOf(repo))
	}
}
