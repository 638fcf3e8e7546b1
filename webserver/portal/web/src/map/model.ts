// Turns MapInput into what both renderers draw: per route its line (the
// decoded polyline, or the stops in seq order), its stops, and the depot.

import { routeColor } from "./palette";
import { decodePolyline } from "./polyline";
import { validLatLon } from "./projection";
import type { MapInput, MapRoute, MapStop } from "./types";

export interface RouteModel {
  /** Index in MapInput.routes; what data-route carries. */
  index: number;
  route: MapRoute;
  color: string;
  /** [lat, lon] points of the drawn line, in driving order. */
  line: [number, number][];
  /** Stops with valid coordinates, sorted by seq. */
  stops: MapStop[];
}

export interface MapModel {
  /** Every input route, drawn or not (the legend lists them all). */
  all: RouteModel[];
  /** Routes with at least one stop: one path each. */
  drawn: RouteModel[];
  depot: [number, number] | null;
  stopCount: number;
}

const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

export function buildModel(input: MapInput): MapModel {
  const routes = Array.isArray(input?.routes) ? input.routes : [];
  let depot: [number, number] | null = null;
  const all: RouteModel[] = routes.map((route, index) => {
    const stops = (Array.isArray(route?.stops) ? route.stops : [])
      .filter((s) => s && validLatLon(s.lat, s.lon))
      .slice()
      .sort((a, b) => a.seq - b.seq);
    let line: [number, number][] = [];
    if (route?.polyline) {
      line = decodePolyline(route.polyline).filter(([lat, lon]) => validLatLon(lat, lon));
      if (line.length > 0 && depot === null) depot = line[0];
    }
    if (line.length < 2) line = stops.map((s): [number, number] => [s.lat, s.lon]);
    const color = isColor(route?.color) ? route.color : routeColor(index);
    return { index, route, color, line, stops };
  });
  const drawn = all.filter((r) => r.stops.length > 0);
  const stopCount = drawn.reduce((n, r) => n + r.stops.length, 0);
  return { all, drawn, depot, stopCount };
}

function isColor(c: unknown): c is string {
  if (typeof c !== "string" || c === "") return false;
  if (HEX_COLOR.test(c)) return true;
  return typeof CSS !== "undefined" && typeof CSS.supports === "function" && CSS.supports("color", c);
}

export function stopTitle(stop: MapStop): string {
  const parts = [`Stop ${stop.seq}`];
  if (stop.orderRef) parts.push(String(stop.orderRef));
  if (stop.title) parts.push(String(stop.title));
  return parts.join(" · ");
}

export function mapLabel(model: MapModel): string {
  const n = model.drawn.length;
  const s = model.stopCount;
  return `Map of ${n} route${n === 1 ? "" : "s"} with ${s} stop${s === 1 ? "" : "s"}${model.depot ? " and the depot" : ""}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
