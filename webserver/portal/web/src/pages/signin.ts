// The sign-in form: the only page without a key. It checks the key with
// GET /v1/me before keeping it, so a wrong key is refused at once.

import { ApiError, call, isAbort } from "../api";
import { h } from "../dom";
import { storeKey } from "../session";
import type { Me } from "../types";
import { explain } from "../ui";

/** rejectedKey is what a 401 at sign-in says. */
export const rejectedKey =
  "This API key was not accepted. Check that you copied the whole key (it starts with svc_sk_) and that it has not been revoked.";

/** noLongerAccepted is what shows when a stored key starts getting 401. */
export const noLongerAccepted =
  "Your API key is no longer accepted: it may have been revoked. Sign in again with a valid key.";

/**
 * renderSignIn fills main with the form; onSignedIn runs with the key and
 * its /v1/me once the API accepted it. message, when given, shows first
 * (why the user is here again).
 */
export function renderSignIn(main: HTMLElement, signal: AbortSignal, onSignedIn: (key: string, me: Me) => void, message?: string): void {
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    autocapitalize: "off",
    required: true,
    "aria-describedby": "api-key-hint",
  });
  const submit = h("button", { type: "submit", class: "button primary" }, "Sign in");
  const errorBox = h("p", { id: "sign-in-error", class: "error-box", role: "alert", hidden: !message }, message ?? "");
  const form = h(
    "form",
    { id: "sign-in", class: "card sign-in", novalidate: true },
    h("label", { for: "api-key" }, "API key"),
    input,
    h(
      "p",
      { id: "api-key-hint", class: "hint" },
      "A key of your company, starting with svc_sk_. It is kept in this browser tab only, until you sign out or close the tab.",
    ),
    errorBox,
    submit,
  );
  const fail = (text: string) => {
    errorBox.textContent = text;
    errorBox.hidden = false;
    input.setAttribute("aria-invalid", "true");
    input.focus();
  };
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (key === "") {
      fail("Enter an API key.");
      return;
    }
    submit.disabled = true;
    submit.textContent = "Signing in…";
    try {
      const me = await call<Me>("GET", "/v1/me", { key, signal });
      if (!storeKey(key)) {
        fail("This browser does not allow the portal to keep the key (session storage is blocked). Allow site data for this page and try again.");
        return;
      }
      onSignedIn(key, me);
    } catch (err) {
      if (isAbort(err)) return;
      fail(err instanceof ApiError && err.status === 401 ? rejectedKey : explain(err));
    } finally {
      submit.disabled = false;
      submit.textContent = "Sign in";
    }
  });
  main.append(
    h("h1", { tabindex: -1 }, "Sign in to routeopt"),
    h("p", null, "The portal shows your company's route optimizations and manages its API keys."),
    form,
  );
  input.focus();
}
