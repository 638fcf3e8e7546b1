// The API keys page: list, create (the key shown once), revoke. Needs the
// scope keys:write; a key can only grant scopes it holds itself, so the
// form offers exactly those.

import { ApiError, call, isAbort } from "../api";
import { h, replace, tableWrap, td, th } from "../dom";
import { ago, dateTime } from "../format";
import { keyId } from "../session";
import type { ApiKey, NewApiKey } from "../types";
import { clearError, confirmDialog, pageErrorSlot, showError, type PageContext } from "../ui";

/** maxNameLength mirrors the API's limit (schema.MaxAPIKeyName), so the form stops at it. */
const maxNameLength = 120;

export function renderKeys(ctx: PageContext): void {
  const { main, signal, me } = ctx;
  let sessionKeyId: string | null = null;
  let pending: ApiKey | null = null;
  const rowsById = new Map<string, HTMLTableRowElement>();

  const errorSlot = pageErrorSlot();
  const tbody = h("tbody");
  const table = h(
    "table",
    { id: "api-keys", class: "data" },
    h("caption", { class: "visually-hidden" }, "Your company's API keys, oldest first"),
    h(
      "thead",
      null,
      h("tr", null, th("Name"), th("Prefix"), th("Scopes"), th("Created"), th("Last used"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions"))),
    ),
    tbody,
  );
  const listSection = h(
    "section",
    { "aria-labelledby": "keys-heading", hidden: true },
    h("h2", { id: "keys-heading" }, "Keys"),
    tableWrap("API keys", table),
  );
  const loading = h("p", { class: "loading" }, "Loading keys…");

  const revokeText = h("p");
  const revokeWarning = h("p", { class: "warning", hidden: true }, "This is the key this session is signed in with: revoking it signs you out.");
  const dialog = confirmDialog({
    id: "revoke-dialog",
    title: "Revoke this API key?",
    body: [revokeText, revokeWarning, "Programs using it are refused within seconds. This cannot be undone."],
    confirmId: "revoke-confirm",
    confirmText: "Revoke key",
    dismissId: "revoke-dismiss",
    dismissText: "Keep key",
    onConfirm: () => void revoke(),
  });

  const form = createForm();
  main.append(
    h("h1", { tabindex: -1 }, "API keys"),
    h("p", null, "Keys let your systems, and this portal, use the routeopt API for your company. Give each system its own key, so one can be revoked without stopping the others."),
    errorSlot,
    loading,
    listSection,
    form,
    dialog.dialog,
  );

  void load();

  async function load(): Promise<void> {
    try {
      const [list, id] = await Promise.all([call<{ items: ApiKey[] }>("GET", "/v1/api-keys", { signal }), keyId(ctx.key)]);
      if (signal.aborted) return;
      sessionKeyId = id;
      loading.hidden = true;
      replace(tbody, ...list.items.map(row));
      listSection.hidden = false;
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      loading.hidden = true;
      showError(errorSlot, err);
      // Without keys:write the form could only fail the same way.
      if (err instanceof ApiError && err.code === "insufficient_scope") form.hidden = true;
    }
  }

  /** isSession says whether k is the key this tab signed in with: by id, else (no WebCrypto) by prefix. */
  function isSession(k: ApiKey): boolean {
    return sessionKeyId !== null ? k.id === sessionKeyId : ctx.key.startsWith(k.prefix);
  }

  function row(k: ApiKey): HTMLTableRowElement {
    const revokeButton = h("button", { type: "button", class: "revoke button danger small", "aria-label": "Revoke key " + k.name }, "Revoke");
    revokeButton.addEventListener("click", () => {
      pending = k;
      revokeText.textContent = `Revoke the key “${k.name}” (${k.prefix}…)?`;
      revokeWarning.hidden = !isSession(k);
      dialog.open();
    });
    const tr = h(
      "tr",
      { "data-key-id": k.id },
      td("name", k.name, isSession(k) ? h("span", { class: "this-session" }, " (this session)") : null),
      td("prefix", h("code", { class: "prefix" }, k.prefix)),
      td("scopes", h("span", { class: "scopes" }, k.scopes.join(", "))),
      td("created", h("time", { datetime: k.created_at, title: dateTime(k.created_at) }, ago(k.created_at))),
      td("last_used", k.last_used_at ? h("time", { datetime: k.last_used_at, title: dateTime(k.last_used_at) }, ago(k.last_used_at)) : "never"),
      h("td", { class: "row-actions" }, revokeButton),
    );
    rowsById.set(k.id, tr);
    return tr;
  }

  async function revoke(): Promise<void> {
    const k = pending;
    if (!k) return;
    dialog.setBusy(true);
    try {
      await call<void>("DELETE", "/v1/api-keys/" + encodeURIComponent(k.id), { signal });
    } catch (err) {
      if (isAbort(err)) return;
      dialog.error(err);
      return;
    }
    dialog.close();
    if (isSession(k)) {
      ctx.signOut("You revoked the key this session was signed in with. Sign in with another key.");
      return;
    }
    const tr = rowsById.get(k.id);
    rowsById.delete(k.id);
    // Focus would be lost with the row: move it to the table's region.
    (table.parentElement as HTMLElement).focus();
    tr?.remove();
  }

  function createForm(): HTMLElement {
    const name = h("input", { id: "key-name", name: "name", type: "text", required: true, maxlength: maxNameLength, autocomplete: "off" });
    const scopeBoxes = me.scopes.map((s) =>
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "scope", value: s, checked: true }), " ", s),
    );
    const submit = h("button", { type: "submit", class: "button primary" }, "Create key");
    const errorBox = h("p", { id: "create-key-error", class: "error-box", role: "alert", hidden: true });
    const result = h("div", { id: "new-key-slot" });
    const form = h(
      "form",
      { id: "create-key", novalidate: true },
      h("label", { for: "key-name" }, "Name"),
      name,
      h("p", { class: "hint", id: "key-name-hint" }, "What the key is for, e.g. “ERP nightly import”."),
      h("fieldset", null, h("legend", null, "Scopes"), h("div", { class: "checks" }, ...scopeBoxes)),
      errorBox,
      submit,
    );
    name.setAttribute("aria-describedby", "key-name-hint");
    const fail = (text: string) => {
      errorBox.textContent = text;
      errorBox.hidden = false;
    };
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearError(errorBox);
      const keyName = name.value.trim();
      const scopes = scopeBoxes.map((l) => l.querySelector("input")!).filter((i) => i.checked).map((i) => i.value);
      if (keyName === "") {
        fail("Give the key a name, so you can tell it apart later.");
        name.focus();
        return;
      }
      if (scopes.length === 0) {
        fail("Choose at least one scope.");
        return;
      }
      submit.disabled = true;
      try {
        const created = await call<NewApiKey>("POST", "/v1/api-keys", { body: { name: keyName, scopes }, signal });
        if (signal.aborted) return;
        replace(result, newKey(created));
        const { key: _secret, ...record } = created;
        void _secret;
        tbody.append(row(record));
        listSection.hidden = false;
        form.reset();
        (result.querySelector("#copy-key") as HTMLElement | null)?.focus();
      } catch (err) {
        if (isAbort(err)) return;
        showError(errorBox, err);
      } finally {
        submit.disabled = false;
      }
    });
    return h(
      "section",
      { class: "card", "aria-labelledby": "create-heading" },
      h("h2", { id: "create-heading" }, "Create a key"),
      form,
      result,
    );
  }
}

/** newKey shows a just-created key once, with a copy button. */
function newKey(created: NewApiKey): HTMLElement {
  const value = h("code", { id: "new-key-value" }, created.key);
  const copy = h("button", { type: "button", id: "copy-key", class: "button secondary" }, "Copy");
  const status = h("span", { id: "copy-status", role: "status" });
  copy.addEventListener("click", async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(created.key);
      status.textContent = "Copied";
    } catch {
      // Plain http on another host has no clipboard API: select it for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(value);
      const sel = getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
      status.textContent = "Copying is not allowed here: the key is selected, press Ctrl+C (⌘C on a Mac) to copy it.";
    }
  });
  return h(
    "div",
    { id: "new-key", class: "new-key", "aria-labelledby": "new-key-heading", role: "group" },
    h("h3", { id: "new-key-heading" }, `Key “${created.name}” created`),
    h("p", null, "Copy it now and keep it somewhere safe: it is shown only once. Anyone holding it can act for your company with its scopes."),
    h("p", { class: "key-line" }, value, copy, status),
  );
}
