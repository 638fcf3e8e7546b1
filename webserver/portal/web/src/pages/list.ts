// The list page: the company's optimizations, newest first, 20 a page,
// re-fetched every few seconds while any of them is still queued or running.

import { call, isAbort } from "../api";
import { h, replace, tableWrap, td, th } from "../dom";
import { ago, dash, km } from "../format";
import type { OptimizationList, OptimizationRecord, Result } from "../types";
import { clearError, explain, later, pageErrorSlot, showError, stateBadge, type PageContext } from "../ui";

const pageSize = 20;

/** Totals of a completed optimization: a completed result never changes, so they are kept per id. */
interface Totals {
  distanceM: number;
  unassigned: number;
}
const totalsCache = new Map<string, Totals>();

/** isLive says whether a record may still change, so the list must keep polling. */
function isLive(r: OptimizationRecord): boolean {
  return r.status === "queued" || r.status === "running";
}

/** pageFrom reads ?page=N, so a reload or a shared link keeps the page. */
function pageFrom(search: string): number {
  const n = Number(new URLSearchParams(search).get("page"));
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

export function renderList(ctx: PageContext): void {
  const { main, signal } = ctx;
  let page = pageFrom(location.search);
  let pages = 1;
  let stopPolling = () => {};

  const errorSlot = pageErrorSlot();
  const notes = h("ul", { id: "list-notes", class: "notes", hidden: true });
  const tbody = h("tbody");
  const table = h(
    "table",
    { id: "optimizations", class: "data" },
    h("caption", { class: "visually-hidden" }, "Optimizations, newest first"),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        th("Name"),
        th("State"),
        th("Progress", "col", { class: "num" }),
        th("Orders", "col", { class: "num" }),
        th("Distance", "col", { class: "num" }),
        th("Unassigned", "col", { class: "num" }),
        th("Created"),
      ),
    ),
    tbody,
  );
  const wrap = tableWrap("Optimizations", table);
  wrap.hidden = true;
  const empty = h(
    "div",
    { id: "empty", class: "card", hidden: true },
    h("p", null, "No optimizations yet."),
    h(
      "p",
      null,
      "Create one with POST /v1/optimizations from your own system or with curl; ",
      h("a", { href: "/docs" }, "the API documentation"),
      " shows the request and lets you try it.",
    ),
  );
  const prev = h("button", { type: "button", id: "prev-page", class: "button secondary" }, "Previous");
  const next = h("button", { type: "button", id: "next-page", class: "button secondary" }, "Next");
  const info = h("span", { id: "page-info", "aria-live": "polite" });
  const pagination = h("nav", { id: "pagination", "aria-label": "Pages of optimizations", hidden: true }, prev, info, next);
  const loading = h("p", { class: "loading" }, "Loading optimizations…");

  main.append(h("h1", { tabindex: -1 }, "Optimizations"), errorSlot, loading, empty, wrap, notes, pagination);

  prev.addEventListener("click", () => go(page - 1));
  next.addEventListener("click", () => go(page + 1));

  function go(n: number): void {
    if (n < 1 || n > pages) return;
    page = n;
    history.replaceState(history.state, "", n === 1 ? "/portal/" : "/portal/?page=" + n);
    void load();
  }

  async function load(): Promise<void> {
    stopPolling();
    let list: OptimizationList;
    try {
      list = await call<OptimizationList>("GET", `/v1/optimizations?page=${page}&page_size=${pageSize}`, { signal });
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      loading.hidden = true;
      showError(errorSlot, err, "The list could not be loaded: ");
      // Keep trying while the service is away; a 401 has left the page already.
      stopPolling = later(signal, () => void load());
      return;
    }
    if (signal.aborted) return;
    clearError(errorSlot);
    loading.hidden = true;
    pages = Math.max(1, Math.ceil(list.total / pageSize));
    if (page > pages && list.total > 0) {
      // The list shrank (retention) under a deep link: show the last page.
      go(pages);
      return;
    }
    renderRows(list.items);
    empty.hidden = list.total > 0;
    wrap.hidden = list.total === 0;
    pagination.hidden = list.total === 0;
    prev.disabled = page <= 1;
    next.disabled = page >= pages;
    // Keep focus on a pagination button that just got disabled at an end.
    if (document.activeElement === document.body) (prev.disabled ? next : prev).focus();
    info.textContent = `Page ${page} of ${pages}`;
    void fillTotals(list.items.filter((r) => r.status === "completed"));
    if (list.items.some(isLive)) stopPolling = later(signal, () => void load());
  }

  function renderRows(items: OptimizationRecord[]): void {
    const focusedId = (document.activeElement?.closest("tr[data-id]") as HTMLElement | null)?.dataset["id"];
    replace(tbody, ...items.map(row));
    if (focusedId) (tbody.querySelector(`tr[data-id="${CSS.escape(focusedId)}"] a`) as HTMLElement | null)?.focus();
  }

  function row(r: OptimizationRecord): HTMLTableRowElement {
    const totals = totalsCache.get(r.id);
    const href = "/portal/optimizations/" + encodeURIComponent(r.id);
    const created = h("time", { datetime: r.created_at, title: r.created_at }, ago(r.created_at));
    return h(
      "tr",
      { "data-id": r.id },
      td("name", h("a", { href }, r.name ?? r.id.slice(0, 8))),
      td("state", stateBadge(r.status)),
      h("td", { "data-col": "progress", class: "num" }, r.progress + "%"),
      h("td", { "data-col": "orders", class: "num" }, r.orders),
      h("td", { "data-col": "distance", class: "num" }, totals ? km(totals.distanceM) : dash),
      h("td", { "data-col": "unassigned", class: "num" }, totals ? totals.unassigned : dash),
      td("age", created),
    );
  }

  /** fillTotals fetches the results of completed rows not seen before, a few at a time. */
  async function fillTotals(completed: OptimizationRecord[]): Promise<void> {
    const todo = completed.filter((r) => !totalsCache.has(r.id));
    const failures: string[] = [];
    const worker = async () => {
      for (let r = todo.shift(); r; r = todo.shift()) {
        try {
          const res = await call<Result>("GET", `/v1/optimizations/${encodeURIComponent(r.id)}/result`, { signal });
          const t = { distanceM: res.kpis.distance_m, unassigned: res.kpis.orders_unassigned };
          totalsCache.set(r.id, t);
          const tr = tbody.querySelector(`tr[data-id="${CSS.escape(r.id)}"]`);
          if (tr) {
            tr.querySelector('[data-col="distance"]')!.textContent = km(t.distanceM);
            tr.querySelector('[data-col="unassigned"]')!.textContent = String(t.unassigned);
          }
        } catch (err) {
          if (isAbort(err) || signal.aborted) return;
          failures.push(`The totals of ${r.name ?? r.id.slice(0, 8)} could not be loaded: ${explain(err)}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    if (signal.aborted) return;
    replace(notes, ...failures.map((f) => h("li", null, f)));
    notes.hidden = failures.length === 0;
  }

  void load();
}
