package calc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/validate"
)

// Load the bundled example repo, calculate every group and explain one membership.
func Example() {
	ctx := context.Background()
	repo, err := calc.Load(ctx, "../examples/config/entitlements.yaml", calc.Options{
		Now:     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), // expirations depend on "today"
		BaseDir: "../examples/config",                        // error and file paths are relative to it
		Types:   backends.Types(),                            // the built-in backend types (ldap, github_team, ...)
	})
	if err != nil {
		log.Fatal(err) // a validate.List: every problem of the repo, one per line
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		log.Fatal(err)
	}
	g := res.Group("pizza_teams/sre")
	fmt.Println(g.DN)
	fmt.Println(strings.Join(g.Members, ","))

	ex, err := res.Explain("pizza_teams/sre", "mallory")
	if err != nil {
		log.Fatal(err)
	}
	ex.WriteText(os.Stdout)
	// Output:
	// cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net
	// Dave,erin,mallory
	// mallory IS a member of pizza_teams/sre (groups/pizza_teams/sre.txt)
	// rules (+ matches this person, - does not):
	//   + all of
	//     + any of
	//       + management = carol (line 2)
	//           org chart: mallory → carol
	//     + all of
	//       + not: username = carol (line 3) does not exclude mallory
	// filters:
	//   contractors = list: mallory is in the filter's population and listed by this group: kept
}

// Every problem of a repo comes back at once, each at its file and line, with a Kind that
// callers branch on.
func ExampleLoad_errors() {
	_, err := calc.Load(context.Background(), "testdata/example/entitlements.yaml", calc.Options{
		BaseDir: "testdata/example",
		Strict:  true, // the files of dummy OUs are checked even when nothing uses them
		Types:   backends.Types(),
	})
	var list validate.List
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Printf("%s:%d: [%s] %s\n", e.Path, e.Line, e.Kind, e.Msg)
		}
	}
	// Output:
	// groups/teams/admins.txt:3: [missing group reference] Could not find a configuration for groups/teams/oncall.(rb|txt|yaml) (filename: "groups/teams/admins.txt"); closest existing: teams/on-call
	// groups/teams/on-call.txt:3: [method not allowed] The method "usrname" is not allowed (unknown rule method); did you mean "username"? (valid methods and filters: group, username)
}
