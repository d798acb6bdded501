package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// harness report on a claim-check run directory writes its section and no JUnit file.
func TestReportClaimCheckRun(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "reports", "testdata", "claimcheck", "claimcheck.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claimcheck.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"report", dir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := "report: " + filepath.Join(dir, "report.html") + "\n"; out.String() != want {
		t.Errorf("printed %q; want %q (no junit line: a claim-check run has no gates)", out.String(), want)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<section id="claimcheck">`) {
		t.Error("report.html lacks the claim-check section")
	}
}

// A setting the pipeline does not have is a usage error that names the valid ones, before
// any fleet starts.
func TestRunClaimCheckBadSetting(t *testing.T) {
	for _, args := range [][]string{
		{"--all=false", "--placement", "inline"},
		{"--all=false", "--placement", "claim", "--deletion", "never"},
		{"--faults=maybe"},
	} {
		root := newRootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(append([]string{"run", "claimcheck"}, args...))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "use ") {
			t.Errorf("%v: %v; want an error that names the valid values", args, err)
		}
		if _, gate := err.(*gateError); gate {
			t.Errorf("%v: a usage error is not a failed check (exit 2, not 1)", args)
		}
	}
}

// --faults both runs every setting fault-free, then under the fault window, as the
// document's two tables do; the bare flag is the fault window alone.
func TestFaultsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []bool
	}{
		{nil, []bool{true}},
		{[]string{"--faults"}, []bool{true}},
		{[]string{"--faults=false"}, []bool{false}},
		{[]string{"--faults=both"}, []bool{false, true}},
	} {
		cmd := newRunClaimCheckCmd()
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got := cmd.Flags().Lookup("faults").Value.(*faultsFlag).conditions()
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%v: runs %v; want %v", tc.args, got, tc.want)
		}
	}
}
