package serve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromiumPath returns the headless browser the inspector test drives: $CHROMIUM, or
// the first of chromium, chromium-browser, google-chrome on $PATH. Without one the
// test is skipped, or fails when $CI is true (.ci/run installs Debian's chromium).
func chromiumPath(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if p := os.Getenv("CHROMIUM"); p != "" {
		names = append([]string{p}, names...)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no chromium on PATH (looked for %s): CI needs it for the inspector test; install Debian's chromium (apt-get install chromium)", strings.Join(names, ", "))
	}
	t.Skipf("no chromium on PATH (looked for %s)", strings.Join(names, ", "))
	return ""
}

// TestInspectorBrowser drives the inspector page in headless chromium: it picks the
// file that calls a function, types the cursor after the call's parenthesis, and
// waits for a part holding the function's definition from the other file. With
// $REPOCTX_SCREENSHOT set to a .png path it saves the page there (docs/inspector.png:
// REPOCTX_SCREENSHOT=$PWD/docs/inspector.png go test -tags kotlin2 -run InspectorBrowser ./serve).
func TestInspectorBrowser(t *testing.T) {
	bin := chromiumPath(t)
	dir := filepath.Join(t.TempDir(), "billing")
	write(t, dir, "src/Billing.kt", `package demo.billing

/** The total of the items' prices (in cents) with the tax rate applied. */
fun computeInvoiceTotal(items: List<Long>, taxRate: Double): Long {
    val net = items.sum()
    return Math.round(net * (1 + taxRate))
}

data class Invoice(val customer: String, val items: List<Long>)
`)
	write(t, dir, "src/App.kt", `package demo.app

import demo.billing.Invoice
import demo.billing.computeInvoiceTotal

fun main() {
    val invoice = Invoice("ACME", listOf(1200L, 350L, 99L))
    val total = computeInvoiceTotal(invoice.items, 0.2)
    println("${invoice.customer}: $total")
}
`)
	ts := startServer(t, []Folder{{Dir: dir}}, nil)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // CI runs as root, where chromium's sandbox refuses to start
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 720),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()

	const (
		file = "src/App.kt"
		at   = "    val total = computeInvoiceTotal(" // line 8
	)
	cursor := "8:" + strconv.Itoa(len(at)+1)
	part := chromedp.CSS(`#out[data-state="done"] .part[data-path="src/Billing.kt"] pre`)
	steps := []struct {
		what string
		do   chromedp.Action[chromedp.Void]
	}{
		{"open the page", chromedp.Navigate(ts.url + "/")},
		{"list the files", chromedp.WaitReady(chromedp.CSS(`#pick option`))},
		// Pick the file as a user would: select its option, which fires change.
		{"pick " + file, chromedp.Evaluate[chromedp.Void](`(() => {
			const pick = document.getElementById("pick");
			const o = [...pick.options].find(o => o.textContent === "` + file + `");
			if (!o) throw new Error("no option ` + file + `");
			pick.value = o.value;
			pick.dispatchEvent(new Event("change"));
		})()`)},
		{"show " + file, chromedp.WaitReady(chromedp.CSS(`#file[data-path="` + file + `"]`))},
		{"type the cursor " + cursor, chromedp.SendKeys(chromedp.ID("cursor"), cursor+kb.Enter)},
		{"show a part of src/Billing.kt", chromedp.WaitReady(part)},
	}
	var err error
	for _, s := range steps {
		t0 := time.Now()
		if err = chromedp.Do(bctx, s.do); err != nil {
			err = fmt.Errorf("%s: %w", s.what, err)
			break
		}
		t.Logf("%s: %v", s.what, time.Since(t0).Round(time.Millisecond))
	}
	var partText string
	if err == nil {
		partText, err = chromedp.Run(bctx, chromedp.Text(part))
	}
	if err != nil {
		out, _ := chromedp.Run(bctx, chromedp.Text(chromedp.ID("out")))
		t.Fatalf("inspector in chromium: %v (results: %.500q)", err, out)
	}
	if !strings.Contains(partText, "fun computeInvoiceTotal(items: List<Long>, taxRate: Double): Long") {
		t.Errorf("the part of src/Billing.kt is %q, want the definition of computeInvoiceTotal", partText)
	}
	if shot := os.Getenv("REPOCTX_SCREENSHOT"); shot != "" {
		png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		tmp := shot + ".tmp"
		if err := os.WriteFile(tmp, png, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, shot); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", shot, len(png))
	}
}
