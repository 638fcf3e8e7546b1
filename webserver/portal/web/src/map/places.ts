// How a place where routes start or end is marked, the same in both
// renderers: a dark rounded square with a white glyph (a house for a base
// that routes leave from and return to, a play sign for a start, a flag for
// an end), and data attributes naming the routes.

import type { PlaceModel } from "./model";

/** The marker's class: depot-marker for a base, as the depot always was. */
export const placeClass: Record<PlaceModel["kind"], string> = {
  depot: "depot-marker",
  start: "route-start-marker",
  end: "route-end-marker",
};

/** The glyph, an SVG path in a 24×24 box centred on 0,0. */
export const placeGlyph: Record<PlaceModel["kind"], string> = {
  depot: "M0 -7.5 L7.5 -1 H5.2 V6.5 H1.8 V2.2 H-1.8 V6.5 H-5.2 V-1 H-7.5 Z",
  start: "M-4.5 -7 L7 0 L-4.5 7 Z",
  end: "M-5.5 -7.5 H6.5 L3.5 -3.75 L6.5 0 H-3.5 V7.5 H-5.5 Z",
};

/** Sets data-start-routes and data-end-routes: the indices (data-route) of the routes that start and end there. */
export function setPlaceData(el: Element, p: PlaceModel): void {
  el.setAttribute("data-start-routes", p.starts.join(" "));
  el.setAttribute("data-end-routes", p.ends.join(" "));
}
