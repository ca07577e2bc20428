package review_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/review"
)

// coveredPlan: the org target removes erin from the org, which removes her from teams eng
// (nothing else changes there) and web (which also adds carol).
func coveredPlan() (*deploy.Plan, *providers.Change) {
	org := &providers.Change{Kind: providers.UpdateGroup, OU: "github-org", DN: "cn=member,ou=org", Remove: []string{"erin"}}
	eng := &providers.Change{Kind: providers.UpdateGroup, OU: "github", DN: "cn=eng,ou=teams", Remove: []string{"erin"},
		Covered: []providers.Cover{{Member: "erin", By: org}}}
	web := &providers.Change{Kind: providers.UpdateGroup, OU: "github", DN: "cn=web,ou=teams", Add: []string{"carol"},
		Remove: []string{"erin"}, Covered: []providers.Cover{{Member: "erin", By: org}}}
	return &deploy.Plan{Targets: []*deploy.TargetPlan{
		{OU: "github-org", Type: "github_org", Changes: []*providers.Change{org}},
		{OU: "github", Type: "github_team", Changes: []*providers.Change{eng, web}},
	}}, eng
}

// Covered removals are shown with the target that makes them, changes made entirely by
// others are counted apart, in every rendering.
func TestPlanShowsCoveredRemovals(t *testing.T) {
	plan, eng := coveredPlan()
	var text bytes.Buffer
	review.WritePlanText(&text, plan, review.PlanTextOptions{})
	for _, want := range []string{
		"github (github_team): 2 change(s), 1 covered by other targets' changes (nothing sent)",
		"~ CHANGE cn=eng,ou=teams (covered: made by changes of other targets, nothing sent)\n    .  - erin (covered by github-org)\n",
		"~ CHANGE cn=web,ou=teams\n    .  + carol\n    .  - erin (covered by github-org)\n",
		"Plan: 0 to create, 2 to update, 0 to delete, 1 covered by other targets' changes\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, text.String())
		}
	}
	var md bytes.Buffer
	if err := review.WritePlanMarkdown(&md, plan, review.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**0 to create, 2 to update, 0 to delete, 0 people, 0 container(s)**; 1 covered by other targets' changes (nothing sent)",
		"change `cn=eng,ou=teams`: +0 −1 (covered: made by changes of other targets, nothing sent)",
		"➖ `erin` (covered by `github-org`)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown plan lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := review.WritePlanJSON(&js, plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"covered": [`) || !strings.Contains(js.String(), `"by_ou": "github-org"`) {
		t.Errorf("JSON plan lacks the covers:\n%s", js.String())
	}
	var rep bytes.Buffer
	review.WriteReport(&rep, &deploy.Report{Targets: []*deploy.TargetReport{{OU: "github", Outcomes: []providers.Outcome{
		{Change: eng, Status: providers.Covered}, {Change: plan.Targets[1].Changes[1], Status: providers.Applied}}}}}, review.ReportOptions{})
	if want := "Apply: 1 change(s) applied, 1 covered by other targets' changes, 0 skipped, 0 failed"; !strings.Contains(rep.String(), want) {
		t.Errorf("report %q lacks %q", rep.String(), want)
	}
}

// A plan whose providers estimate the apply says so in the PR comment, per target and in
// total; a plan without estimates says nothing of it.
func TestPlanMarkdownEstimate(t *testing.T) {
	plan, _ := coveredPlan()
	var md bytes.Buffer
	if err := review.WritePlanMarkdown(&md, plan, review.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Estimated apply") {
		t.Errorf("a plan without estimates shows one:\n%s", md.String())
	}
	plan.Targets[1].Estimate = &providers.Estimate{Writes: map[string]int{"team_member": 3}, Duration: 3 * time.Second,
		Notes: []string{"@acme/admins <b>x</b>"}}
	md.Reset()
	if err := review.WritePlanMarkdown(&md, plan, review.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Estimated apply duration: about 3s**", "- `github`: 3 writes (team\\_member 3), about 3s"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown plan lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "@acme") || strings.Contains(md.String(), "<b>") {
		t.Errorf("an estimate's note reached the comment unescaped:\n%s", md.String())
	}
}
