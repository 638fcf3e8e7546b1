package browser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestAPIKeys lists the keys, creates one with a name and fewer scopes
// (shown once, copied with the button, accepted by the API with exactly
// those scopes), revokes it in the page (the API refuses it within 5 s, as
// docs/API.md says), and finally revokes the session's own key, which
// signs the page out.
func TestAPIKeys(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Keys Test GmbH")
	var who me
	c.must(t, 200, "GET", "/v1/me", nil, &who)
	var keys struct{ Items []apiKey }
	c.must(t, 200, "GET", "/v1/api-keys", nil, &keys)
	if len(keys.Items) != 1 {
		t.Fatalf("a new company has %d keys, want 1", len(keys.Items))
	}
	session := keys.Items[0]

	p := openPage(t, d)
	p.navigate("/portal/api-keys")
	p.signIn(c.key)
	row := fmt.Sprintf(`table#api-keys tbody tr[data-key-id=%q]`, session.ID)
	p.waitVisible(row)
	cells := p.rows(row)[0].Cols
	if !strings.Contains(cells["name"], session.Name) || !strings.Contains(cells["name"], "(this session)") {
		t.Errorf("the session key's name cell %q should give %q and say (this session)", cells["name"], session.Name)
	}
	if cells["prefix"] != session.Prefix && cells["prefix"] != session.Prefix+"…" {
		t.Errorf("prefix cell %q, want %q", cells["prefix"], session.Prefix)
	}
	for _, s := range session.Scopes {
		if !strings.Contains(cells["scopes"], s) {
			t.Errorf("scopes cell %q lacks %s", cells["scopes"], s)
		}
	}

	// The form offers exactly the session key's scopes, all checked.
	type box struct {
		Value   string `json:"value"`
		Checked bool   `json:"checked"`
	}
	boxes := eval[[]box](p, `Array.from(document.querySelectorAll("form#create-key input[name=scope]")).map(b => ({value: b.value, checked: b.checked}))`)
	var offered []string
	for _, b := range boxes {
		offered = append(offered, b.Value)
		if !b.Checked {
			t.Errorf("scope %s is not checked by default", b.Value)
		}
	}
	if !slices.Equal(sorted(offered), sorted(who.Scopes)) {
		t.Errorf("the form offers scopes %v, want the key's own %v", offered, who.Scopes)
	}

	// Create a read-only key.
	p.do("name the key", chromedp.SendKeys(chromedp.CSS("form#create-key input#key-name"), "ci-reader"))
	for _, b := range boxes {
		if b.Value != "optimizations:read" {
			p.click(fmt.Sprintf(`form#create-key input[name=scope][value=%q]`, b.Value))
		}
	}
	p.click(`form#create-key button[type=submit]`)
	p.waitVisible("#new-key code#new-key-value")
	newKey := p.text("#new-key-value")
	if !strings.HasPrefix(newKey, "svc_sk_") {
		t.Fatalf("#new-key-value shows %q, want a svc_sk_ key", newKey)
	}
	if text := p.text("#new-key"); !strings.Contains(text, "once") {
		t.Errorf("#new-key %q does not say the key is shown only once", text)
	}
	reader := &apiClient{base: d.URL, key: newKey}
	var readerMe me
	reader.must(t, 200, "GET", "/v1/me", nil, &readerMe)
	if !slices.Equal(readerMe.Scopes, []string{"optimizations:read"}) {
		t.Errorf("the new key holds %v, want exactly [optimizations:read]", readerMe.Scopes)
	}

	// The copy button puts the key on the clipboard and says so.
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: perm}, Setting: cdpbrowser.PermissionSettingGranted,
			Origin: p.origin, BrowserContextID: chromedp.FromContext(p.ctx).BrowserContextID,
		}); err != nil {
			t.Fatalf("grant %s: %v", perm, err)
		}
	}
	p.click("#copy-key")
	p.waitText("#new-key", "Copied")
	if got := eval[string](p, `navigator.clipboard.readText()`); got != newKey {
		t.Errorf("the clipboard holds %q, want the new key", got)
	}

	// The new row, then its revocation.
	var id string
	waitFor(t, actionTimeout, "the new key's row", func() (bool, string) {
		for _, r := range p.rows("table#api-keys tbody tr[data-key-id]") {
			if r.Cols["name"] == "ci-reader" {
				id = r.Data["keyId"]
				return r.Cols["scopes"] == "optimizations:read" && r.Cols["last_used"] != "", fmt.Sprintf("%+v", r)
			}
		}
		return false, "no row named ci-reader"
	})
	newRow := fmt.Sprintf(`table#api-keys tbody tr[data-key-id=%q]`, id)
	if label := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-label")`, jsString(newRow+" button.revoke"))); label != "Revoke key ci-reader" {
		t.Errorf("the revoke button is labelled %q", label)
	}
	p.click(newRow + " button.revoke")
	p.waitJS("the revoke dialog to open", `document.querySelector("dialog#revoke-dialog").open`)
	p.click("#revoke-confirm")
	p.waitCount(newRow, 0)
	revoked := time.Now()
	waitFor(t, 5*time.Second, "the API to refuse the revoked key (within 5 s)", func() (bool, string) {
		status, body := reader.do(t, "GET", "/v1/me", nil, nil)
		return status == 401, fmt.Sprintf("%d %s", status, body)
	})
	t.Logf("the revoked key was refused %v after the row went", time.Since(revoked).Round(time.Millisecond))
	if !sentRequest(p, "DELETE", "/v1/api-keys/"+id) {
		t.Error("the page did not send DELETE /v1/api-keys/" + id)
	}

	// Revoking the key of this session signs the page out, with a message.
	p.click(row + " button.revoke")
	p.waitJS("the revoke dialog to open", `document.querySelector("dialog#revoke-dialog").open`)
	p.click("#revoke-confirm")
	p.waitVisible("form#sign-in")
	p.waitVisible("#sign-in-error")
	if p.storedKey() != nil {
		t.Error("the revoked session key is still in sessionStorage")
	}
	if status, _ := c.do(t, "GET", "/v1/me", nil, nil); status != 401 {
		waitFor(t, 5*time.Second, "the API to refuse the session's revoked key", func() (bool, string) {
			status, body := c.do(t, "GET", "/v1/me", nil, nil)
			return status == 401, fmt.Sprintf("%d %s", status, body)
		})
	}
}

// TestSignInErrors: a wrong key gets a clear message at sign-in; a key
// revoked while signed in sends the page back to the sign-in form saying so.
func TestSignInErrors(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Sign-in Test GmbH")

	p := openPage(t, d)
	// The browser logs every 401 answer as a failed resource load.
	p.expectConsole(`status of 401 \(Unauthorized\)`)
	p.navigate("/portal/")
	p.submitKey("svc_sk_" + strings.Repeat("x", 43))
	p.waitVisible("#sign-in-error")
	if msg := p.text("#sign-in-error"); !strings.Contains(msg, "not accepted") || !strings.Contains(msg, "svc_sk_") {
		t.Errorf("#sign-in-error says %q; want that the key was not accepted and what a key looks like", msg)
	}
	if role := eval[string](p, `document.querySelector("#sign-in-error").getAttribute("role")`); role != "alert" {
		t.Errorf("#sign-in-error has role %q, want alert", role)
	}
	if p.storedKey() != nil {
		t.Error("a refused key was stored")
	}

	// A second key, signed in, then revoked behind the page's back.
	var second apiKey
	c.must(t, 201, "POST", "/v1/api-keys", map[string]any{"name": "temporary", "scopes": []string{"optimizations:read"}}, &second)
	p.signIn(second.Key)
	p.waitVisible("main")
	c.must(t, 204, "DELETE", "/v1/api-keys/"+second.ID, nil, nil)
	gone := &apiClient{base: d.URL, key: second.Key}
	waitFor(t, 5*time.Second, "the API to refuse the revoked key", func() (bool, string) {
		status, body := gone.do(t, "GET", "/v1/me", nil, nil)
		return status == 401, fmt.Sprintf("%d %s", status, body)
	})
	// The next call the page makes is refused: the nav link loads the list.
	p.click(`nav a[href="/portal/"]`)
	p.waitVisible("form#sign-in")
	p.waitText("#sign-in-error", "no longer accepted")
	if p.storedKey() != nil {
		t.Error("the revoked key is still in sessionStorage")
	}
}

func sorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

// sentRequest tells whether the page sent method to a URL ending in path.
func sentRequest(p *page, method, path string) bool {
	for _, r := range p.Requests() {
		if r.Method == method && strings.HasSuffix(r.URL, path) {
			return true
		}
	}
	return false
}
