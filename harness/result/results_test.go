package result

import (
	"os"
	"strings"
	"testing"
)

// The committed peer table (docs/results/peers.md, make results) is the generator's output: it
// starts with the generator's header and its separator, and every row has the header's columns.
func TestResultsPeerTableIsGenerated(t *testing.T) {
	b, err := os.ReadFile("../../docs/results/peers.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = PeerTableBegin, PeerTableEnd
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/results/peers.md has no %s ... %s block", begin, end)
	}
	lines := strings.Split(strings.TrimSpace(s[i+len(begin):j]), "\n")
	var table []string
	for _, l := range lines {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		}
	}
	if len(table) < 3 || table[0] != PeerTableHeader {
		t.Fatalf("docs/results/peers.md's table does not start with the generator's header %q:\n%s", PeerTableHeader, strings.Join(table, "\n"))
	}
	sep := strings.Split(PeerTableMarkdown(nil), "\n")[1]
	if table[1] != sep {
		t.Errorf("separator %q, want %q", table[1], sep)
	}
	cols := strings.Count(PeerTableHeader, "|")
	for _, row := range table[2:] {
		if n := strings.Count(row, "|"); n != cols {
			t.Errorf("row has %d column bars, want %d: %s", n, cols, row)
		}
	}
}
