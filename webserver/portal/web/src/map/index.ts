// The route map (webserver/portal/README.md, "The map").
//
// mountRouteMap draws the routes into container: an offline SVG map by
// default, or Leaflet on a tile layer when input.tiles is set (Leaflet is
// then loaded with a dynamic import, in its own chunk), followed by the
// legend (#map-legend). Everything is built with DOM APIs and textContent.

import { renderLegend } from "./legend";
import { mountLeafletMap } from "./leafletmap";
import { buildModel } from "./model";
import type { Renderer } from "./renderer";
import { mountSvgMap } from "./svgmap";
import type { MapHandle, MapInput } from "./types";

export type { MapHandle, MapInput, MapPlace, MapRoute, MapStop } from "./types";
export { decodePolyline } from "./polyline";
export { routeColor } from "./palette";

export function mountRouteMap(container: HTMLElement, input: MapInput): MapHandle {
  const model = buildModel(input);
  const root = document.createElement("div");
  root.className = "route-map";
  const stage = document.createElement("div");
  stage.className = "map-stage";
  root.appendChild(stage);

  let renderer: Renderer | null = null;
  let destroyed = false;
  let highlighted: number | null = null;
  const legend = renderLegend(model, (index) => {
    highlighted = index;
    renderer?.highlight(index);
  });
  // A renderer that arrives later (Leaflet loads asynchronously) takes over the highlight.
  const use = (r: Renderer) => {
    renderer = r;
    if (highlighted !== null) r.highlight(highlighted);
  };
  container.append(root, legend.element);

  const tiles = input?.tiles;
  if (tiles && typeof tiles.url === "string" && tiles.url !== "") {
    const loading = document.createElement("p");
    loading.className = "map-status";
    loading.setAttribute("role", "status");
    loading.textContent = "Loading the map…";
    stage.appendChild(loading);
    mountLeafletMap(stage, model, tiles).then(
      (r) => {
        loading.remove();
        if (destroyed) r.destroy();
        else use(r);
      },
      (err: unknown) => {
        // Leaflet could not be loaded: draw the offline map and say why.
        loading.remove();
        if (destroyed) return;
        stage.classList.remove("map-stage-tiles");
        stage.querySelector(".map-leaflet")?.remove();
        const note = document.createElement("p");
        note.className = "map-status map-status-error";
        note.setAttribute("role", "status");
        note.textContent = `The tile map could not be loaded (${err instanceof Error ? err.message : String(err)}); showing the offline map.`;
        root.appendChild(note);
        use(mountSvgMap(stage, model));
      },
    );
  } else {
    renderer = mountSvgMap(stage, model);
  }

  return {
    destroy() {
      if (destroyed) return;
      destroyed = true;
      renderer?.destroy();
      renderer = null;
      legend.destroy();
      root.remove();
    },
  };
}
