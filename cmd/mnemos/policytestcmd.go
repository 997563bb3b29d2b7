package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestCmd is mnemos policy test.
type TestCmd struct {
	PolicyFile string `name:"policy-file" help:"Test this policy file instead of the configured one." placeholder:"FILE"`
	File       string `arg:"" help:"The file of test cases (a cases: list of command, want and optional level, channel, sender, cwd, reason, grants, rule, decided_by)." placeholder:"CASES"`
}

// Run evaluates every case with the policy alone (the guard and the judge
// are not part of a policy test), prints a PASS or FAIL line per case and
// a summary, and exits 1 when any case fails.
func (c *TestCmd) Run(a *app) error {
	src, err := os.ReadFile(c.File)
	if err != nil {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("cannot read test cases: %v", err)}
	}
	cases, err := policy.ParseCases(c.File, src)
	if err != nil {
		return &exitError{code: exitFailure, msg: err.Error(), hint: "see `mnemos policy test --help` for the format of a case"}
	}
	var p *policy.Policy
	if c.PolicyFile != "" {
		p, err = policy.Load(c.PolicyFile)
	} else {
		paths, perr := a.paths()
		if perr != nil {
			return perr
		}
		p, err = a.loadCheckedPolicy(paths)
	}
	if err != nil {
		return err
	}
	passed, failed := 0, 0
	now := a.now()
	for _, tc := range cases {
		res, err := p.RunCase(a.ctx, tc, now)
		if err != nil {
			return err
		}
		got := fmt.Sprintf("%s by %s", res.Got.Outcome, res.Got.DecidedBy)
		if res.Got.Rule != nil {
			got += fmt.Sprintf(" (rule %q)", res.Got.Rule.Name)
		}
		if res.Pass() {
			passed++
			fmt.Fprintf(a.io.out, "PASS  %s: %s\n", oneLine(tc.Name), got)
			continue
		}
		failed++
		fmt.Fprintf(a.io.out, "FAIL  %s (%s:%d): %s; %s: %s\n", oneLine(tc.Name), tc.Pos.File, tc.Pos.Line,
			strings.Join(res.Problems, ", "), got, oneLine(res.Got.Reason))
	}
	fmt.Fprintf(a.io.out, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return quietExit(exitFailure)
	}
	return nil
}
