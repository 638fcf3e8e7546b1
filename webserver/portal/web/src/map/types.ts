// The map module's public types (re-exported by index.ts; see
// webserver/portal/README.md, "The map").

/** One stop of a route, in driving order (seq starts at 1). */
export interface MapStop {
  seq: number;
  orderRef: string;
  lat: number;
  lon: number;
  title: string;
}

/** Where a route starts or ends; label names it ("" when only coordinates are known). */
export interface MapPlace {
  lat: number;
  lon: number;
  label: string;
}

/** One vehicle's route. polyline is Google's encoded polyline (precision 1e5)
 * from the route's start through the stops to its end (the depot unless the
 * route has others; no leg back for an open route), or null. start and end
 * are given when the result names them; without them the route starts and
 * ends at the depot, known only from a polyline. openEnd: the route ends at
 * its last stop. */
export interface MapRoute {
  vehicleRef: string;
  label: string;
  color: string;
  stops: MapStop[];
  polyline: string | null;
  start?: MapPlace | null;
  end?: MapPlace | null;
  openEnd?: boolean;
}

export interface MapInput {
  routes: MapRoute[];
  /** When set, the map is drawn with Leaflet on this tile layer. */
  tiles?: { url: string; attribution: string };
}

export interface MapHandle {
  destroy(): void;
}
