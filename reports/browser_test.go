package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The report opens offline in a real browser: headless Chromium renders it from a file URL
// with the network off, and its DOM comes back whole with every chart in it. An extra check
// where Debian's chromium is installed; the HTML assertions above hold everywhere.
func TestReportOpensOfflineInABrowser(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no headless browser on PATH (apt-get install chromium) for the extra render check")
	}
	w, html := generate(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	profile := t.TempDir()
	shot := filepath.Join(t.TempDir(), "report.png")
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
		// No network: a resource the page fetches from outside would fail to load.
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"}
	dom, err := exec.CommandContext(ctx, browser, append(base, "--dump-dom", "file://"+w.HTML)...).Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v", browser, err)
	}
	if n, want := strings.Count(string(dom), "<svg"), strings.Count(html, "<svg"); n != want || n == 0 {
		t.Errorf("the browser's DOM holds %d charts, the file %d", n, want)
	}
	if !strings.Contains(string(dom), "Gates") {
		t.Error("the rendered page lacks the gates table")
	}
	if err := exec.CommandContext(ctx, browser, append(base, "--window-size=1200,2000", "--screenshot="+shot, "file://"+w.HTML)...).Run(); err != nil {
		t.Fatalf("%s --screenshot: %v", browser, err)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Errorf("screenshot %v (%v): the page did not render", fi, err)
	}
}
