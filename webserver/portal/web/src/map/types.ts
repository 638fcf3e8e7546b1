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

/** One vehicle's route. polyline is Google's encoded polyline (precision 1e5)
 * from the depot through the stops back to the depot, or null. */
export interface MapRoute {
  vehicleRef: string;
  label: string;
  color: string;
  stops: MapStop[];
  polyline: string | null;
}

export interface MapInput {
  routes: MapRoute[];
  /** When set, the map is drawn with Leaflet on this tile layer. */
  tiles?: { url: string; attribution: string };
}

export interface MapHandle {
  destroy(): void;
}
