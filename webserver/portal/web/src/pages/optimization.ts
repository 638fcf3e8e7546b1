// One optimization (what links.web points at): live state while it runs,
// then the plan a dispatcher reads: KPIs, the map, unassigned orders and a
// table per route, with exports; or why it failed, in plain words.

import { call, isAbort } from "../api";
import { tiles } from "../config";
import { h, replace, tableWrap, td, th } from "../dom";
import { ago, clock, dash, dateTime, hmm, km, late, percent, plural, timeWindow } from "../format";
import { mountRouteMap, routeColor, type MapHandle, type MapInput, type MapPlace } from "../map/index";
import type { ExportRecord, OptimizationRecord, Place, Result, Route, RouteBreak, Stop } from "../types";
import { clearError, confirmDialog, later, pageErrorSlot, setState, showError, stateBadge, type PageContext } from "../ui";

/** failureText explains each error_code to a dispatcher: what happened and what to do. */
export const failureText: Record<string, string> = {
  geocoding_unavailable:
    "The addresses could not be placed on the map because the address lookup service did not answer. Your orders are probably fine: create the optimization again in a few minutes, or send latitude and longitude with each order so no lookup is needed.",
  matrix_unavailable:
    "The driving distances and times between the stops could not be worked out because the road network service did not answer. Create the optimization again in a few minutes.",
  solver_error:
    "The route planner hit a problem it could not get past. Create the optimization again; if it fails again, pass the details below to whoever runs routeopt for you.",
  deadline_exceeded:
    "Planning took longer than the time allowed and was stopped. Try again with fewer orders or a shorter solver time, or at a quieter moment.",
  internal_error:
    "Something went wrong inside the service. Create the optimization again; if it keeps failing, pass the details below to whoever runs routeopt for you.",
  invalid_input:
    "The orders could not be planned as they were sent. The details below say what to fix; then create a new optimization.",
};

/** genericFailure explains an error_code the portal does not know. */
export const genericFailure = "The optimization could not be completed. The details below say why.";

const kpiLabels: [key: string, label: string][] = [
  ["orders_assigned", "Orders assigned"],
  ["orders_unassigned", "Orders unassigned"],
  ["vehicles_used", "Vehicles used"],
  ["distance_m", "Distance"],
  ["drive_seconds", "Driving time (h:mm)"],
  ["late_stops", "Late stops"],
  ["avg_utilization", "Average load"],
];

export function renderOptimization(ctx: PageContext, id: string): void {
  const { main, signal } = ctx;
  const base = "/v1/optimizations/" + encodeURIComponent(id);
  let record: OptimizationRecord | null = null;
  let resultShown = false;
  let map: MapHandle | null = null;
  signal.addEventListener("abort", () => map?.destroy(), { once: true });

  const heading = h("h1", { tabindex: -1 }, id);
  const errorSlot = pageErrorSlot();
  const state = stateBadge("queued", { id: "opt-state" });
  const stage = h("span", { id: "opt-stage" }, dash);
  // The stage names a step of the work, so it is shown only while work goes on.
  const stagePart = h("span", {}, h("span", { class: "sep" }, " · "), "Stage: ", stage);
  const progress = h("progress", { id: "opt-progress", max: 100, value: 0 });
  const progressText = h("span", { class: "progress-text", "aria-hidden": "true" }, "0%");
  const progressLine = h("p", { class: "progress-line" }, h("label", { for: "opt-progress" }, "Progress"), progress, progressText);
  const facts = h("dl", { class: "facts" });
  const cancel = h("button", { type: "button", id: "cancel", class: "button danger", hidden: true }, "Cancel optimization");
  const body = h("div", { id: "opt-body" });
  const statusPanel = h(
    "section",
    { class: "card status", "aria-labelledby": "status-heading", hidden: true },
    h("h2", { id: "status-heading", class: "visually-hidden" }, "Status"),
    h("p", { class: "state-line", "aria-live": "polite", "aria-atomic": "true" }, "State: ", state, stagePart),
    progressLine,
    facts,
    cancel,
  );

  const dialog = confirmDialog({
    id: "cancel-dialog",
    title: "Cancel this optimization?",
    body: ["It stops planning now. A cancelled optimization cannot be resumed: to plan these orders later, create a new one."],
    confirmId: "cancel-confirm",
    confirmText: "Cancel optimization",
    dismissId: "cancel-dismiss",
    dismissText: "Keep it running",
    onConfirm: async () => {
      dialog.setBusy(true);
      try {
        const rec = await call<OptimizationRecord>("POST", base + "/cancel", { signal });
        dialog.close();
        show(rec);
        cancel.hidden = true;
      } catch (err) {
        if (isAbort(err)) return;
        dialog.error(err);
        // 409: it finished meanwhile; show what it is now.
        void refresh(false);
      }
    },
  });
  cancel.addEventListener("click", () => dialog.open());

  main.append(
    h("p", { class: "back" }, h("a", { href: "/portal/" }, "← All optimizations")),
    heading,
    h("p", { class: "opt-id" }, "ID ", h("code", null, id)),
    errorSlot,
    statusPanel,
    body,
    dialog.dialog,
  );

  /** refresh fetches the record; while live it schedules the next fetch. */
  async function refresh(poll: boolean): Promise<void> {
    try {
      const rec = await call<OptimizationRecord>("GET", base, { signal });
      if (signal.aborted) return;
      clearError(errorSlot);
      show(rec);
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      showError(errorSlot, err, record ? "The state could not be refreshed: " : "");
      // A 404 will not change by waiting; anything else (a blip) may.
      if ((err as { status?: number }).status === 404) return;
    }
    if (poll && (!record || record.status === "queued" || record.status === "running")) later(signal, () => void refresh(true));
  }

  function show(rec: OptimizationRecord): void {
    const changed = record?.status !== rec.status;
    record = rec;
    const title = rec.name ?? rec.id;
    heading.textContent = title;
    document.title = title + " · routeopt";
    statusPanel.hidden = false;
    setState(state, rec.status);
    stage.textContent = rec.stage || dash;
    stagePart.hidden = rec.status !== "queued" && rec.status !== "running";
    // A failed or cancelled one stopped part way: its progress says nothing useful.
    progressLine.hidden = rec.status === "failed" || rec.status === "cancelled";
    const pct = Math.max(0, Math.min(100, rec.progress));
    progress.value = pct;
    progressText.textContent = pct + "%";
    replace(
      facts,
      ...fact("Orders", String(rec.orders)),
      ...fact("Vehicles", String(rec.vehicles)),
      ...fact("Strategy", rec.strategy),
      ...fact("Created", dateTime(rec.created_at)),
      ...(rec.finished_at ? fact("Finished", dateTime(rec.finished_at)) : []),
    );
    const live = rec.status === "queued" || rec.status === "running";
    cancel.hidden = !live;
    if (!live) dialog.close();
    if (!changed) return;
    if (rec.status === "failed") replace(body, failure(rec));
    else if (rec.status === "cancelled") replace(body, cancelled(rec));
    else if (rec.status === "completed" && !resultShown) {
      resultShown = true;
      void loadResult();
    } else if (live) replace(body);
  }

  function failure(rec: OptimizationRecord): HTMLElement {
    const code = rec.error_code ?? "unknown";
    return h(
      "section",
      { id: "opt-error", class: "card failure", "aria-labelledby": "opt-error-heading" },
      h("h2", { id: "opt-error-heading" }, "This optimization failed"),
      h("p", null, failureText[code] ?? genericFailure),
      h("p", null, "Details: ", rec.error_message || dash),
      h("p", null, "Error code: ", h("code", null, code)),
    );
  }

  function cancelled(rec: OptimizationRecord): HTMLElement {
    const when = rec.finished_at;
    return h(
      "section",
      { id: "opt-cancelled", class: "card" },
      h(
        "p",
        null,
        when
          ? `This optimization was cancelled on ${dateTime(when)} (${ago(when)}). It will not be planned; create a new one to plan these orders.`
          : "This optimization was cancelled. It will not be planned; create a new one to plan these orders.",
      ),
    );
  }

  async function loadResult(): Promise<void> {
    replace(body, h("p", { class: "loading" }, "Loading the plan…"));
    try {
      const result = await call<Result>("GET", base + "/result?include_path=true", { signal });
      if (signal.aborted) return;
      replace(body, ...plan(result));
      const mapEl = body.querySelector<HTMLElement>("#route-map");
      if (mapEl) map = mountRouteMap(mapEl, mapInput(result));
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      replace(body);
      showError(errorSlot, err, "The plan could not be loaded: ");
      resultShown = false;
    }
  }

  void refresh(true);

  function plan(result: Result): HTMLElement[] {
    const routes = routesWithStops(result);
    const out: HTMLElement[] = [exports(), kpis(result)];
    if (result.warnings?.length) {
      out.push(
        h(
          "section",
          { id: "warnings", class: "card", "aria-labelledby": "warnings-heading" },
          h("h2", { id: "warnings-heading" }, "Notes on this plan"),
          h("ul", null, ...result.warnings.map((w) => h("li", { "data-code": w.code }, w.message))),
        ),
      );
    }
    out.push(
      h(
        "section",
        { class: "map-section", "aria-labelledby": "map-heading" },
        h("h2", { id: "map-heading" }, "Map"),
        h("div", { id: "route-map" }),
      ),
    );
    if (result.unassigned?.length) out.push(unassigned(result));
    out.push(
      h(
        "section",
        { id: "routes", "aria-labelledby": "routes-heading" },
        h("h2", { id: "routes-heading" }, "Routes"),
        routes.length ? null : h("p", null, "No route has any stop."),
        ...routes.map((r, i) => routeSection(r, i)),
      ),
    );
    return out;
  }

  function exports(): HTMLElement {
    const xlsx = h("button", { type: "button", id: "export-xlsx", class: "button primary" }, "Download Excel");
    const csv = h("button", { type: "button", id: "export-csv", class: "button secondary" }, "Download CSV");
    const status = h("p", { id: "export-status", class: "hint", "aria-live": "polite" });
    const errorBox = h("p", { id: "export-error", class: "error-box", role: "alert", hidden: true });
    const run = async (format: "xlsx" | "csv") => {
      xlsx.disabled = csv.disabled = true;
      clearError(errorBox);
      status.textContent = format === "xlsx" ? "Preparing the Excel file…" : "Preparing the CSV file…";
      try {
        const rec = await call<ExportRecord>("POST", base + "/exports", { body: { format }, signal });
        const url = new URL(rec.download_url, location.href);
        if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("The export link is not a web address: " + rec.download_url);
        status.textContent = "Your download has started.";
        // The link carries its own signature; the file comes as an attachment, so the page stays.
        location.assign(url.href);
      } catch (err) {
        if (isAbort(err)) return;
        status.textContent = "";
        showError(errorBox, err, "The export failed: ");
      } finally {
        xlsx.disabled = csv.disabled = false;
      }
    };
    xlsx.addEventListener("click", () => void run("xlsx"));
    csv.addEventListener("click", () => void run("csv"));
    return h(
      "section",
      { class: "card exports", "aria-labelledby": "exports-heading" },
      h("h2", { id: "exports-heading" }, "Driver sheets"),
      h("div", { class: "actions" }, xlsx, csv),
      status,
      errorBox,
    );
  }
}

function fact(label: string, value: string): HTMLElement[] {
  return [h("dt", null, label), h("dd", null, value)];
}

function kpis(result: Result): HTMLElement {
  const k = result.kpis;
  const value = (key: string): string => {
    switch (key) {
      case "distance_m":
        return km(k.distance_m);
      case "drive_seconds":
        return hmm(k.drive_seconds);
      case "avg_utilization":
        return percent(k.avg_utilization);
      default:
        return String((k as unknown as Record<string, number>)[key] ?? dash);
    }
  };
  return h(
    "section",
    { class: "card", "aria-labelledby": "kpis-heading" },
    h("h2", { id: "kpis-heading" }, "Summary"),
    h(
      "dl",
      { id: "kpis", class: "kpis" },
      ...kpiLabels.map(([key, label]) => h("div", { class: "kpi" }, h("dt", null, label), h("dd", { "data-kpi": key }, value(key)))),
    ),
  );
}

/** routesWithStops are the routes drawn and listed; their index picks the colour on the map and in the tables alike. */
function routesWithStops(result: Result): Route[] {
  return (result.routes ?? []).filter((r) => r.stops.length > 0);
}

function routeLabel(r: Route): string {
  return r.driver_name ? `${r.vehicle_ref} (${r.driver_name})` : r.vehicle_ref;
}

function mapInput(result: Result): MapInput {
  return {
    routes: routesWithStops(result).map((r, i) => ({
      vehicleRef: r.vehicle_ref,
      label: routeLabel(r),
      color: routeColor(i),
      polyline: r.polyline || null,
      start: r.start ? mapPlace(r.start) : null,
      end: r.end ? mapPlace(r.end) : null,
      openEnd: r.end === null,
      stops: r.stops.map((s) => ({
        seq: s.seq,
        orderRef: s.order_ref,
        lat: s.latitude,
        lon: s.longitude,
        title: [s.customer, s.address].filter((x) => x).join(", ") || s.order_ref,
      })),
    })),
    tiles: tiles(),
  };
}

function mapPlace(p: Place): MapPlace {
  return { lat: p.latitude, lon: p.longitude, label: p.address };
}

/** placeName names a route's start or end: its address, or its coordinates. */
function placeName(p: Place): string {
  return p.address || `${p.latitude}, ${p.longitude}`;
}

/** breakText is a break as a driver reads it: "Break 30 min, 12:10–12:40". */
function breakText(b: RouteBreak): string {
  return `Break ${Math.round(Math.max(0, b.end_s - b.start_s) / 60)} min, ${clock(b.start_s)}–${clock(b.end_s)}`;
}

/**
 * stopRows lists a route's rows in driving order: its stops, and when the
 * result names them its start first, each break after the stop it follows
 * (after_seq; 0 before the first stop) and its end last.
 */
function stopRows(r: Route): HTMLTableRowElement[] {
  const event = (kind: "start" | "break" | "end", time: number, text: string) =>
    h(
      "tr",
      { "data-kind": kind, class: "route-event" },
      h("td", { "data-col": "seq", class: "num" }),
      td("arrival", clock(time)),
      h("td", { "data-col": "event", colspan: 5 }, text),
    );
  const stop = (s: Stop) =>
    h(
      "tr",
      { "data-seq": s.seq, class: s.late_s > 0 ? "is-late" : null },
      h("td", { "data-col": "seq", class: "num" }, s.seq),
      td("arrival", clock(s.arrival_s)),
      td("window", timeWindow(s.time_window_start, s.time_window_end)),
      td("order_ref", s.order_ref),
      td("customer", s.customer || dash),
      td("address", s.address),
      h("td", { "data-col": "late", class: s.late_s > 0 ? "late" : "on-time" }, late(s.late_s)),
    );
  const rows: HTMLTableRowElement[] = [];
  if (r.start) rows.push(event("start", r.depart_s, "Start: " + placeName(r.start)));
  const breaks = (r.breaks ?? []).slice().sort((a, b) => a.after_seq - b.after_seq || a.start_s - b.start_s);
  let next = 0;
  for (const s of r.stops) {
    for (; next < breaks.length && breaks[next].after_seq < s.seq; next++) rows.push(event("break", breaks[next].start_s, breakText(breaks[next])));
    rows.push(stop(s));
  }
  for (const b of breaks.slice(next)) rows.push(event("break", b.start_s, breakText(b)));
  if (r.end === null) rows.push(event("end", r.return_s, "Ends at the last stop (open route)"));
  else if (r.end) rows.push(event("end", r.return_s, "End: " + placeName(r.end)));
  return rows;
}

/** loadText is a route's load in each named dimension: "weight_kg 200.5 of 500". */
function loadText(r: Route): string | null {
  const loads = r.loads ?? {};
  const names = Object.keys(loads);
  if (!names.length) return null;
  return names.map((n) => (r.capacities?.[n] !== undefined ? `${n} ${loads[n]} of ${r.capacities[n]}` : `${n} ${loads[n]}`)).join(", ");
}

function unassigned(result: Result): HTMLElement {
  const rows = result.unassigned.map((u) =>
    h("tr", { "data-order-ref": u.order_ref }, td("order_ref", u.order_ref), td("reason", h("code", null, u.reason)), td("message", u.message)),
  );
  return h(
    "section",
    { class: "unassigned-section", "aria-labelledby": "unassigned-heading" },
    h("h2", { id: "unassigned-heading" }, `Unassigned orders (${result.unassigned.length})`),
    tableWrap(
      "Unassigned orders",
      h(
        "table",
        { id: "unassigned", class: "data" },
        h("caption", { class: "visually-hidden" }, "Orders that could not be planned, with the reason"),
        h("thead", null, h("tr", null, th("Order"), th("Reason"), th("Why"))),
        h("tbody", null, ...rows),
      ),
    ),
  );
}

function routeSection(r: Route, index: number): HTMLElement {
  const color = routeColor(index);
  const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
  swatch.style.backgroundColor = color;
  const headingId = "route-" + index + "-heading";
  const breaks = r.breaks ?? [];
  const times =
    r.end === null
      ? `leaves ${clock(r.depart_s)}, ends at the last stop ${clock(r.return_s)}`
      : r.end
        ? `leaves ${clock(r.depart_s)}, ends ${clock(r.return_s)}`
        : `leaves ${clock(r.depart_s)}, back ${clock(r.return_s)}`;
  const meta = [
    plural(r.stops.length, "stop"),
    km(r.distance_m),
    times,
    breaks.length ? plural(breaks.length, "break") : null,
    r.capacity > 0 ? `load ${r.load} of ${r.capacity}` : null,
    loadText(r),
  ].filter((x): x is string => x !== null);
  return h(
    "section",
    { class: "route card", "data-vehicle-ref": r.vehicle_ref, "aria-labelledby": headingId },
    h("h3", { id: headingId }, swatch, routeLabel(r)),
    h("p", { class: "route-meta" }, meta.join(" · ")),
    tableWrap(
      "Stops of " + r.vehicle_ref,
      h(
        "table",
        { class: "stops data" },
        h("caption", { class: "visually-hidden" }, `Stops of ${routeLabel(r)} in driving order`),
        h(
          "thead",
          null,
          h("tr", null, th("#", "col", { class: "num" }), th("Arrival"), th("Window"), th("Order"), th("Customer"), th("Address"), th("On time")),
        ),
        h("tbody", null, ...stopRows(r)),
      ),
    ),
  );
}
