package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// claimDir copies the committed claim-check run (testdata/claimcheck: a real Docker run of
// two settings under the fault window and one fault-free) into a fresh run directory.
func claimDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claimcheck", result.ClaimCheckFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, result.ClaimCheckFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A claim-check run directory gets its own section through the ordinary Generate: every
// setting's figures, model beside measured, its checks and the bytes chart.
func TestGenerateClaimCheckSection(t *testing.T) {
	dir := claimDir(t)
	w, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.JUnit != "" {
		t.Errorf("a claim-check run has no gates, yet a JUnit file %q", w.JUnit)
	}
	b, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	row := func(name, doc, ledger, measured string) string {
		return `<tr class="figure"><td>` + name + `</td><td class="n">` + doc + `</td><td class="n">` + ledger +
			`</td><td class="n">` + measured + `</td></tr>`
	}
	check := func(name, mark string) string {
		return `<tr class="check"><td>` + name + `</td><td class="` + mark + `">` + mark + `</td>`
	}
	for _, want := range []string{
		`<section id="claimcheck">`,
		`<h1>Claim-check pipeline on Redis Streams: <span class="PASS">PASS</span></h1>`,
		`<h2 id="claim-0">attach, fault window</h2>`,
		`<h2 id="claim-1">claim immediate, fault window</h2>`,
		`<h2 id="claim-2">claim ttl, fault-free</h2>`,
		// attach, fault window: 300 events, one producer crash, three consumer crashes.
		row("message bytes", "40220", "40220", "40220"),
		row("deliveries", "302", "302", "302"),
		row("carried MB", "12.15", "12.15", "12.15"),
		row("lost events", "1", "1", "1"),
		row("processed", "302", "299", "299"),
		row("duplicates prevented", "-", "3", "3"),
		// claim immediate, fault window: the orphan and no dangling claim with the ledger.
		row("message bytes", "284", "284", "284"),
		row("carried MB", "0.09", "0.09", "0.09"),
		row("orphan payloads", "1", "1", "1"),
		row("dangling claims", "3", "0", "0"),
		row("left in store", "1", "1", "1"),
		// claim ttl, fault-free: every payload left for the TTL.
		row("left in store", "300", "300", "300"),
		row("producer crashes", "0", "0", "0"),
		row("resent after a refused or broken connection", "-", "-", "49"),
		check("every acknowledged event processed exactly once", "PASS"),
		check("the stream drained", "PASS"),
		"Bytes through the queue per setting", "measured in Redis", "<svg",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, `<tr class="figure">`); n != 3*15 {
		t.Errorf("%d figure rows; want 15 for each of the 3 settings", n)
	}
	if n := strings.Count(page, `<tr class="setting">`); n != 3 {
		t.Errorf("%d setting rows; want 3", n)
	}
	if n := strings.Count(page, "<svg"); n != 1 {
		t.Errorf("%d charts; want the bytes chart", n)
	}
	for _, fetch := range []string{`src="http`, `href="http`, "@import"} {
		if strings.Contains(page, fetch) {
			t.Errorf("the report fetches something (%s): it must be self-contained", fetch)
		}
	}
}

// A failed check shows as FAIL, in its row and in the section's heading.
func TestGenerateClaimCheckFailedCheck(t *testing.T) {
	dir := claimDir(t)
	rs, err := result.Read[[]result.ClaimRun](dir, result.ClaimCheckFile)
	if err != nil {
		t.Fatal(err)
	}
	rs[1].Checks[0].Pass, rs[1].Checks[0].Detail, rs[1].Pass = false, "event 17 processed \"2\" times", false
	if err := result.Write(dir, result.ClaimCheckFile, rs); err != nil {
		t.Fatal(err)
	}
	html, err := GenerateClaimCheck(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`<span class="FAIL">FAIL</span></h1>`, `<td class="FAIL">FAIL</td><td>event 17 processed &#34;2&#34; times</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A directory with a summary.json is a load test, whatever else it holds; an empty
// claimcheck.json is an error that says how to make a real one.
func TestClaimCheckRunDetection(t *testing.T) {
	dir := claimDir(t)
	if !isRunOf(dir, result.ClaimCheckFile) {
		t.Fatal("a directory with claimcheck.json alone is a claim-check run")
	}
	if err := os.WriteFile(filepath.Join(dir, result.SummaryFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if isRunOf(dir, result.ClaimCheckFile) {
		t.Error("a directory with summary.json is a load test")
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, result.ClaimCheckFile), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateClaimCheck(empty); err == nil || !strings.Contains(err.Error(), "harness run claimcheck --out") {
		t.Errorf("empty claimcheck.json: %v; want an error naming the command", err)
	}
}
