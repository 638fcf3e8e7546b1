// Pieces the pages share: the page context, page-level errors, polling,
// confirmation dialogs and status badges.

import { ApiError, isAbort } from "./api";
import { h, replace } from "./dom";
import type { Me } from "./types";

/** PageContext is what the router hands a page. */
export interface PageContext {
  /** main is the page's landmark; the page fills it. */
  main: HTMLElement;
  /** signal aborts when the page is left: stop polling, drop late answers. */
  signal: AbortSignal;
  me: Me;
  key: string;
  /** navigate goes to another portal page without reloading. */
  navigate(path: string): void;
  /** signOut forgets the key and shows the sign-in form, with message when given. */
  signOut(message?: string): void;
}

/** pollInterval is how often live views re-fetch: the API asks for 2 to 5 s. */
export const pollInterval = 3000;

/**
 * later runs tick once after pollInterval unless the page is left first;
 * pages call it again from tick to keep polling, so a slow answer never
 * overlaps the next request.
 */
export function later(signal: AbortSignal, tick: () => void): () => void {
  const timer = window.setTimeout(() => {
    if (!signal.aborted) tick();
  }, pollInterval);
  const stop = () => window.clearTimeout(timer);
  signal.addEventListener("abort", stop, { once: true });
  return stop;
}

/** pageErrorSlot is the #page-error element: empty and hidden until an error shows. */
export function pageErrorSlot(): HTMLElement {
  return h("div", { id: "page-error", class: "error-box", role: "alert", hidden: true });
}

/** explain turns an error into the sentence to show. */
export function explain(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === "insufficient_scope") {
      const scope = err.requiredScope;
      return scope
        ? `This API key lacks the scope ${scope}, which this needs. Sign in with a key that has ${scope}, or ask whoever manages your company's keys to add it.`
        : "This API key lacks a scope this needs: " + err.message;
    }
    if (err.status === 0) return err.message;
    const rid = err.status >= 500 && err.requestId ? ` (request id ${err.requestId})` : "";
    return err.message + rid;
  }
  return err instanceof Error ? err.message : String(err);
}

/** showError fills slot with err's explanation; it ignores aborts (the page was left). */
export function showError(slot: HTMLElement, err: unknown, prefix = ""): void {
  if (isAbort(err)) return;
  replace(slot, prefix + explain(err));
  slot.hidden = false;
}

/** clearError empties and hides slot. */
export function clearError(slot: HTMLElement): void {
  replace(slot);
  slot.hidden = true;
}

/** stateBadge shows a status word, coloured by class (text carries the meaning). */
export function stateBadge(status: string, attrs: Record<string, string> = {}): HTMLSpanElement {
  return h("span", { class: "state state-" + status, ...attrs }, status);
}

/** setState updates a badge made by stateBadge. */
export function setState(badge: HTMLElement, status: string): void {
  badge.className = "state state-" + status;
  badge.textContent = status;
}

export interface ConfirmDialog {
  dialog: HTMLDialogElement;
  /** open shows the dialog modally; confirm runs on the confirm button. */
  open(): void;
  close(): void;
  /** error shows a failure inside the dialog. */
  error(err: unknown): void;
  setBusy(busy: boolean): void;
}

/**
 * confirmDialog builds a real <dialog> (focus trapped, Escape closes) with
 * a confirm and a dismiss button; onConfirm runs on confirm.
 */
export function confirmDialog(opts: {
  id: string;
  title: string;
  body: (HTMLElement | string)[];
  confirmId: string;
  confirmText: string;
  dismissId: string;
  dismissText: string;
  onConfirm: () => void;
}): ConfirmDialog {
  const titleId = opts.id + "-title";
  const errorBox = h("p", { class: "error-box", role: "alert", hidden: true, id: opts.id + "-error" });
  const confirm = h("button", { type: "button", id: opts.confirmId, class: "button danger" }, opts.confirmText);
  const dismiss = h("button", { type: "button", id: opts.dismissId, class: "button secondary" }, opts.dismissText);
  const dialog = h(
    "dialog",
    { id: opts.id, "aria-labelledby": titleId },
    h("h2", { id: titleId }, opts.title),
    ...opts.body.map((b) => (typeof b === "string" ? h("p", null, b) : b)),
    errorBox,
    h("div", { class: "dialog-actions" }, dismiss, confirm),
  );
  confirm.addEventListener("click", () => opts.onConfirm());
  dismiss.addEventListener("click", () => dialog.close());
  const setBusy = (busy: boolean) => {
    confirm.disabled = busy;
    dismiss.disabled = busy;
    confirm.setAttribute("aria-busy", String(busy));
  };
  return {
    dialog,
    open() {
      clearError(errorBox);
      setBusy(false);
      if (!dialog.isConnected) document.body.appendChild(dialog);
      dialog.showModal();
      dismiss.focus();
    },
    close() {
      if (dialog.open) dialog.close();
    },
    error(err: unknown) {
      setBusy(false);
      showError(errorBox, err);
    },
    setBusy,
  };
}
