package erb

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var testEnv = map[string]string{"A": "va", "B": "vb", "EMPTY": "", "HOST": "ldap.example.net"}

func testOpts() Options {
	return Options{Getenv: func(k string) (string, bool) {
		v, ok := testEnv[k]
		return v, ok
	}}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name, src, want string
		warnings        int
	}{
		{"plain text", "a: b\nc: d\n", "a: b\nc: d\n", 0},
		{"empty", "", "", 0},
		{"literal <%%", "x: <%%= y\n", "x: <%= y\n", 0},
		{"%%> outside tags is text", "a %%> b %> c -%>\n", "a %%> b %> c -%>\n", 0},
		{"%%> inside a tag", `<%= ENV["A%%>"] %>`, "", 0},
		{"ENV double quotes", `h: <%= ENV["HOST"] %>` + "\n", "h: ldap.example.net\n", 0},
		{"ENV single quotes", "h: <%= ENV['HOST'] %>\n", "h: ldap.example.net\n", 0},
		{"ENV whitespace", "h: <%=ENV [ 'HOST' ]%>\n", "h: ldap.example.net\n", 0},
		{"ENV unset renders empty", "h: <%= ENV['NOPE'] %>\n", "h: \n", 0},
		{"ENV set but empty", "h: <%= ENV['EMPTY'] %>|\n", "h: |\n", 0},
		{"fetch", `h: <%= ENV.fetch("HOST") %>`, "h: ldap.example.net", 0},
		{"fetch single quotes", `h: <%= ENV.fetch('HOST') %>`, "h: ldap.example.net", 0},
		{"fetch default unused", `h: <%= ENV.fetch("HOST", "x") %>`, "h: ldap.example.net", 0},
		{"fetch default used", `h: <%= ENV.fetch("NOPE", "dflt") %>`, "h: dflt", 0},
		{"fetch default mixed quotes", `h: <%= ENV.fetch( 'NOPE' ,"d'q" ) %>`, "h: d'q", 0},
		{"fetch default nil", `h: <%= ENV.fetch("NOPE", nil) %>|`, "h: |", 0},
		{"fetch default escapes", `<%= ENV.fetch("NOPE", "a\"b\\c") %>`, `a"b\c`, 0},
		{"single-quoted backslash is literal", `<%= ENV.fetch('NOPE', 'a\nb') %>`, `a\nb`, 0},
		{"multiline expression", "<%= ENV.fetch(\n  'NOPE',\n  'd'\n) %>", "d", 0},
		{"comment", "a<%# anything at all %>b\n", "ab\n", 0},
		{"comment keeps newline", "<%# c %>\nb\n", "\nb\n", 0},
		{"comment with -%>", "<%# c -%>\nb\n", "b\n", 0},
		{"indented comment keeps indentation", "  <%# c -%>\nb\n", "  b\n", 0},
		{"code tag dropped with warning", "a<% foo %>b\n", "ab\n", 1},
		{"empty code tag is silent", "a<% %>b\n", "ab\n", 0},
		{"plugin loader block leaves no blank line",
			"<%- require_relative \"lib/plugin\" -%>\n<%- require \"x\" -%>\n---\nk: v\n", "---\nk: v\n", 2},
		{"indented <%- swallows indentation", "a\n  \t<%- x -%>\nb\n", "a\nb\n", 1},
		{"<%- after text keeps text", "a\n x <%- x -%>\nb\n", "a\n x b\n", 1},
		{"<%- after text keeps spaces", "a\nx  <%- x -%>\nb\n", "a\nx  b\n", 1},
		{"<%- right after a tag counts as line start", "<%= ENV['A'] %>  <%- x -%>\nb\n", "vab\n", 1},
		{"<%- right after <%% counts as line start", "<%%  <%- x -%>\nb\n", "<%b\n", 1},
		{"<%- without -%> keeps newline", "\t \t<%- x %>\n", "\n", 1},
		{"-%> eats CRLF", "x<%- x -%>\r\ny\n", "xy\n", 1},
		{"-%> eats only a directly following newline", "x<%- x -%> \ny\n", "x \ny\n", 1},
		{"-%> eats one newline only", "x<%# c -%>\n\ny\n", "x\ny\n", 0},
		{"%> keeps newline", "x<% x %>\ny\n", "x\ny\n", 1},
		{"-%> on output tag", "<%= ENV['A'] -%>\n<%= ENV['A'] %>\n", "vava\n", 0},
		{"-%> at end of input", "x\n<%= ENV[\"A\"] -%>", "x\nva", 0},
		{"<%- at end of input", "a <%- x -%>", "a ", 1},
		{"dollar brace", "u: ${A}/${B}\n", "u: va/vb\n", 0},
		{"dollar brace unset", "u: <${NOPE}>\n", "u: <>\n", 0},
		{"escaped dollar brace", "u: $${A}\n", "u: ${A}\n", 0},
		{"plain $NAME untouched", "u: $A $ $$ $$A\n", "u: $A $ $$ $$A\n", 0},
		{"dollar brace not a name", "u: ${A B} ${} ${1A} ${A\n", "u: ${A B} ${} ${1A} ${A\n", 0},
		{"triple dollar", "$$${A}", "$${A}", 0},
		{"dollar brace in tag content is not expanded", "<%# ${A} %>x", "x", 0},
		{"percent in text", "a: 100%\nb: %>\n", "a: 100%\nb: %>\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warns, err := Render([]byte(tc.src), testOpts())
			if tc.name == "%%> inside a tag" {
				// ENV["A%>"] is unset; what matters is that %%> did not close the tag.
				if err != nil || string(got) != "" {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render(%q): %v", tc.src, err)
			}
			if string(got) != tc.want {
				t.Errorf("Render(%q) = %q, want %q", tc.src, got, tc.want)
			}
			if len(warns) != tc.warnings {
				t.Errorf("Render(%q): %d warnings %v, want %d", tc.src, len(warns), warns, tc.warnings)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unterminated output", "a\nb <%= ENV['A']\n", 2, "unterminated ERB tag \"<%=\""},
		{"unterminated code", "a\n\n<% x", 3, "unterminated ERB tag \"<%\""},
		{"unterminated comment", "<%# x %", 1, "unterminated"},
		{"lone opener at end", "x <%", 1, "unterminated"},
		{"fetch unset", "a\n<%= ENV.fetch('NOPE') %>", 2, "environment variable NOPE is not set"},
		{"arbitrary ruby", "x: <%= 1 + 2 %>", 1, `unsupported ERB expression "1 + 2" (only ENV["NAME"] and ENV.fetch are supported; templates are never executed)`},
		{"method on ENV value", "<%= ENV['A'].upcase %>", 1, "unsupported ERB expression"},
		{"ENV other method", "<%= ENV.key?('A') %>", 1, "unsupported"},
		{"interpolation", `<%= ENV["#{x}"] %>`, 1, "unsupported"},
		{"unknown escape", `<%= ENV["\x41"] %>`, 1, "unsupported"},
		{"missing quote", `<%= ENV[A] %>`, 1, "unsupported"},
		{"fetch default not a string", `<%= ENV.fetch("A", 5) %>`, 1, "unsupported"},
		{"nil-ish default", `<%= ENV.fetch("A", nilly) %>`, 1, "unsupported"},
		{"empty output tag", "<%= %>", 1, "unsupported"},
		{"<%-= is a Ruby syntax error", "\n<%-= ENV['A'] %>", 2, "invalid ERB code tag"},
		{"error after good lines", "a\nb\nc <%= ENV['A'] %>\n<%= ENV['A'] %>\n<%= x %>", 5, "unsupported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := Render([]byte(tc.src), testOpts())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Render(%q) = %q, %v; want *Error", tc.src, out, err)
			}
			if out != nil {
				t.Errorf("output %q on error", out)
			}
			if e.Line != tc.line || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %q (line %d), want line %d containing %q", e.Msg, e.Line, tc.line, tc.msg)
			}
			if !strings.HasPrefix(e.Error(), "line ") {
				t.Errorf("Error() = %q", e.Error())
			}
		})
	}
}

func TestWarningContent(t *testing.T) {
	_, warns, err := Render([]byte("\n\n<%- require_relative \"plugins/x\"\n   -%>\n"), testOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].Line != 3 ||
		warns[0].Msg != `ignored ERB code tag (Ruby code is never executed): require_relative "plugins/x"` {
		t.Fatalf("warnings = %#v", warns)
	}
	if warns[0].String() != "line 3: "+warns[0].Msg {
		t.Errorf("String() = %q", warns[0].String())
	}
}

func TestDefaultGetenv(t *testing.T) {
	t.Setenv("ERB_TEST_VAR", "from-os")
	got, _, err := Render([]byte(`<%= ENV["ERB_TEST_VAR"] %>|${ERB_TEST_VAR}`), Options{})
	if err != nil || string(got) != "from-os|from-os" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestRubyDiff compares random templates with Ruby's ERB (trim_mode "-").
// It needs `ruby` and runs only with ERB_RUBY_DIFF=1.
func TestRubyDiff(t *testing.T) {
	if os.Getenv("ERB_RUBY_DIFF") != "1" {
		t.Skip("set ERB_RUBY_DIFF=1 (with ruby on PATH) to compare with Ruby's ERB")
	}
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("ruby not on PATH")
	}
	texts := []string{"x", "ab", " ", "  ", "\t", "\n", "\n", "\r\n", "%>", "-%>", "%%>", "<%%", "%", "-", ">", "<", "k: v\n"}
	opens := []string{"<%", "<%-", "<%=", "<%#"}
	r := rand.New(rand.NewPCG(5, 6))
	var srcs []string
	for range 5000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			if r.IntN(2) == 0 {
				b.WriteString(texts[r.IntN(len(texts))])
				continue
			}
			open := opens[r.IntN(len(opens))]
			b.WriteString(open)
			switch open {
			case "<%=":
				b.WriteString([]string{" ENV['A'] ", "ENV[\"B\"]", " ENV.fetch('NOPE', 'd') ", " ENV['%%>'] "}[r.IntN(4)])
			case "<%#":
				b.WriteString([]string{" c ", "", " %%> "}[r.IntN(3)])
			default:
				b.WriteString([]string{" 1 ", " ", "\n"}[r.IntN(3)])
			}
			b.WriteString([]string{"%>", "-%>"}[r.IntN(2)])
		}
		srcs = append(srcs, b.String())
	}
	data, _ := json.Marshal(srcs)
	cmd := exec.Command("ruby", "-rerb", "-rjson", "-e", `
ENV['A'] = 'va'; ENV['B'] = 'vb'; ENV.delete('NOPE')
out = JSON.parse(STDIN.read).map do |s|
  begin
    ERB.new(s, trim_mode: '-').result.b.force_encoding('UTF-8')
  rescue Exception => e
    "!error"
  end
end
print JSON.generate(out)`)
	cmd.Stdin = bytes.NewReader(data)
	res, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(res, &want); err != nil {
		t.Fatal(err)
	}
	bad, excused := 0, 0
	for i, s := range srcs {
		got, warns, err := Render([]byte(s), testOpts())
		g := string(got)
		if err != nil {
			g = "!error"
		}
		var e *Error
		switch {
		case g == want[i]:
		case errors.As(err, &e) && strings.HasPrefix(e.Msg, "unterminated"):
			// Deliberate: Ruby renders an unterminated tag's text as
			// code or output; this package refuses it.
			excused++
		case want[i] == "!error" && len(warns) > 0:
			// Ruby failed on the random code in a code tag (a
			// SyntaxError); Go never runs it, so it can only warn.
			excused++
		default:
			bad++
			if bad <= 20 {
				t.Errorf("%q: go %q (%v), ruby %q", s, g, err, want[i])
			}
		}
	}
	t.Logf("%d templates compared, %d differ, %d excused (unterminated tags, invalid Ruby code)", len(srcs), bad, excused)
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"", "a", "<%= ENV['A'] %>", "<%- require 'x' -%>\n", "  <%- x -%>\r\n", "<%%", "%%>",
		"<%# c -%>", "${A}", "$${A}", "$$${A}", "${A", "<%= ENV.fetch(\"A\", \"d\") %>",
		"<%= ENV[\"A%%>\"] %>", "<%", "<%-", "-%>", "<%=", "\n<%-= x %>", "a <%- b -%>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, warns, err := Render(src, testOpts())
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Line > bytes.Count(src, []byte{'\n'})+1 {
				t.Fatalf("bad error %#v", err)
			}
			if out != nil {
				t.Fatal("output on error")
			}
			return
		}
		for _, w := range warns {
			if w.Line < 1 || w.Line > bytes.Count(src, []byte{'\n'})+1 {
				t.Fatalf("bad warning line %#v", w)
			}
		}
		if !bytes.Contains(src, []byte("<%")) && !bytes.Contains(src, []byte("$")) && !bytes.Equal(out, src) {
			t.Fatalf("template without tags changed: %q -> %q", src, out)
		}
		// Deferred rendering gives the same text once every placeholder is expanded.
		rd, _, derr := RenderDeferred(src, testOpts())
		if derr != nil {
			t.Fatalf("RenderDeferred failed where Render did not: %v", derr)
		}
		if exp, _, _ := rd.Expand(string(rd.Text)); exp != string(out) {
			t.Fatalf("deferred %q expands to %q, Render gives %q", rd.Text, exp, out)
		}
	})
}

func TestRenderDeferredTokenJoinedByATag(t *testing.T) {
	env := func(string) (string, bool) { return "v", true }
	rd, _, err := RenderDeferred([]byte("a: erbval<%# x %>ue0_ ${A}\n"), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, _ := rd.Expand(string(rd.Text)); out != "a: erbvalue0_ v\n" {
		t.Fatalf("expanded %q", out)
	}
}

func TestRenderDeferred(t *testing.T) {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"A": "*x", "B": "erbvalue0_", "C": ""}[k]
		return v, ok
	}
	src := []byte("a: <%= ENV['A'] %>\nb: x${B}y\nc: ${C}\nd: <%= ENV.fetch('Z', 'dflt') %>\n")
	rd, _, err := RenderDeferred(src, Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rd.Text, []byte("*x")) {
		t.Fatalf("values or a colliding token in the text: %q (token %q)", rd.Text, rd.Token)
	}
	lines := strings.Split(strings.TrimSpace(string(rd.Text)), "\n")
	want := []struct {
		out          string
		subst, whole bool
	}{{"*x", true, true}, {"xerbvalue0_y", true, false}, {"", true, true}, {"dflt", true, true}}
	for i, l := range lines {
		_, v, _ := strings.Cut(l, ": ")
		out, subst, whole := rd.Expand(v)
		if out != want[i].out || subst != want[i].subst || whole != want[i].whole {
			t.Errorf("line %d: Expand(%q) = %q %v %v, want %+v", i+1, v, out, subst, whole, want[i])
		}
	}
	if out, subst, _ := rd.Expand("plain " + rd.Token + "99_"); subst || out != "plain "+rd.Token+"99_" {
		t.Errorf("unknown index expanded: %q", out)
	}
}
