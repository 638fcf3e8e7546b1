// Turns MapInput into what both renderers draw: per route its line (the
// decoded polyline, or its start, its stops in seq order and its end), its
// stops, and the places where routes start and end (the depot, a vehicle's
// own start or end).

import { routeColor } from "./palette";
import { decodePolyline } from "./polyline";
import { validLatLon } from "./projection";
import type { MapInput, MapPlace, MapRoute, MapStop } from "./types";

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

/**
 * A place where drawn routes start or end. kind "depot": some start and some
 * end there (a base, drawn as a house); "start" or "end": routes only start,
 * or only end, there.
 */
export interface PlaceModel {
  lat: number;
  lon: number;
  kind: "depot" | "start" | "end";
  /** Indices (data-route) of the routes that start here, and that end here. */
  starts: number[];
  ends: number[];
  /** What the marker's title says: "Depot", or whose start or end it is and its name. */
  title: string;
}

export interface MapModel {
  /** Every input route, drawn or not (the legend lists them all). */
  all: RouteModel[];
  /** Routes with at least one stop: one path each. */
  drawn: RouteModel[];
  places: PlaceModel[];
  /** The depot known from a polyline of a route that names no start, or null. */
  depot: [number, number] | null;
  stopCount: number;
}

function point(p: MapPlace | null | undefined): [number, number] | null {
  return p && validLatLon(p.lat, p.lon) ? [p.lat, p.lon] : null;
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
      // A route that names no start leaves from the depot: its line's first point.
      if (line.length > 0 && depot === null && !route.start) depot = line[0];
    }
    if (line.length < 2) {
      const start = point(route?.start);
      const end = route?.openEnd ? null : point(route?.end);
      line = [...(start ? [start] : []), ...stops.map((s): [number, number] => [s.lat, s.lon]), ...(end ? [end] : [])];
    }
    const color = isColor(route?.color) ? route.color : routeColor(index);
    return { index, route, color, line, stops };
  });
  const drawn = all.filter((r) => r.stops.length > 0);
  const stopCount = drawn.reduce((n, r) => n + r.stops.length, 0);
  return { all, drawn, places: buildPlaces(drawn, depot), depot, stopCount };
}

/**
 * buildPlaces groups the drawn routes' starts and ends by place: a route
 * without a start (or end) of its own uses the depot, an open route has no
 * end.
 */
function buildPlaces(drawn: RouteModel[], depot: [number, number] | null): PlaceModel[] {
  type Acc = { at: [number, number]; label: string; depot: boolean; starts: RouteModel[]; ends: RouteModel[] };
  const byKey = new Map<string, Acc>();
  const add = (p: [number, number] | null, label: string, isDepot: boolean, r: RouteModel, role: "starts" | "ends") => {
    if (!p) return;
    const key = p[0].toFixed(6) + "," + p[1].toFixed(6);
    let acc = byKey.get(key);
    if (!acc) {
      acc = { at: p, label: "", depot: false, starts: [], ends: [] };
      byKey.set(key, acc);
    }
    if (label && !acc.label) acc.label = label;
    acc.depot = acc.depot || isDepot;
    acc[role].push(r);
  };
  for (const r of drawn) {
    const { start, end, openEnd } = r.route;
    if (start) add(point(start), String(start.label ?? ""), false, r, "starts");
    else add(depot, "", true, r, "starts");
    if (openEnd) continue;
    if (end) add(point(end), String(end.label ?? ""), false, r, "ends");
    else add(depot, "", true, r, "ends");
  }
  return [...byKey.values()].map((p) => ({
    lat: p.at[0],
    lon: p.at[1],
    kind: p.starts.length && p.ends.length ? "depot" : p.starts.length ? "start" : "end",
    starts: p.starts.map((r) => r.index),
    ends: p.ends.map((r) => r.index),
    title: placeTitle(p),
  }));
}

function placeTitle(p: { label: string; depot: boolean; starts: RouteModel[]; ends: RouteModel[] }): string {
  // The depot alone (no route names a start or end of its own): as it always was.
  if (p.depot && p.starts.every((r) => !r.route.start) && p.ends.every((r) => !r.route.end)) return "Depot";
  const names = (rs: RouteModel[]) => rs.map((r) => r.route.label || r.route.vehicleRef).join(", ");
  const roles: string[] = [];
  if (p.starts.length) roles.push("Start of " + names(p.starts));
  if (p.ends.length) roles.push((roles.length ? "end of " : "End of ") + names(p.ends));
  return [roles.join("; "), p.label].filter((x) => x).join(" · ");
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
  const p = model.places;
  const places =
    p.length === 1 && p[0].title === "Depot" ? " and the depot" : p.length ? ` and ${plural(p.length, "place")} where routes start or end` : "";
  return `Map of ${n} route${n === 1 ? "" : "s"} with ${s} stop${s === 1 ? "" : "s"}${places}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
