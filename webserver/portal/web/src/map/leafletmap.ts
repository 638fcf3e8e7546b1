// The tile map: Leaflet on the configured tile layer. Leaflet itself is
// loaded with a dynamic import(), so esbuild puts it in its own chunk that is
// fetched only when tiles are configured.

import type * as Leaflet from "leaflet";
import { mapLabel, plural, stopTitle, type MapModel } from "./model";
import { placeClass, placeGlyph, setPlaceData } from "./places";
import { markerDetail, medianSpacing, project } from "./projection";
import type { Renderer } from "./renderer";

type LeafletModule = typeof Leaflet;

/** Escapes text for Leaflet's attribution control, which takes HTML. */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Leaflet's TileLayer cancels a tile that is no longer wanted by pointing
 * its src at a data: GIF, which the portal's Content-Security-Policy
 * (img-src 'self' and the tile origin) blocks, with an error in the console
 * each time. This subclass cancels by removing src instead (Leaflet 1.9.4's
 * _removeTile, _abortLoading and _tileReady, otherwise unchanged).
 */
function cspFriendlyTileLayer(L: LeafletModule): new (url: string, options: Leaflet.TileLayerOptions) => Leaflet.TileLayer {
  type Tile = { el: HTMLImageElement; coords: { z: number } };
  type Self = { _tiles: Record<string, Tile>; _tileZoom: number; _map: unknown; fire(type: string, data: object): void };
  const grid = L.GridLayer.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  return L.TileLayer.extend({
    _removeTile(this: Self, key: string) {
      const tile = this._tiles[key];
      if (!tile) return undefined;
      tile.el.removeAttribute("src");
      return grid._removeTile.call(this, key);
    },
    _abortLoading(this: Self) {
      for (const key of Object.keys(this._tiles)) {
        const t = this._tiles[key];
        if (t.coords.z === this._tileZoom || t.el.complete) continue;
        t.el.removeAttribute("src");
        t.el.remove();
        delete this._tiles[key];
        this.fire("tileabort", { tile: t.el, coords: t.coords });
      }
    },
    _tileReady(this: Self, coords: unknown, err: unknown, tile?: HTMLImageElement) {
      if (!this._map || (tile && !tile.getAttribute("src"))) return undefined;
      return grid._tileReady.call(this, coords, err, tile);
    },
  }) as unknown as new (url: string, options: Leaflet.TileLayerOptions) => Leaflet.TileLayer;
}

export async function mountLeafletMap(
  stage: HTMLElement,
  model: MapModel,
  tiles: { url: string; attribution: string },
): Promise<Renderer> {
  const mod = (await import("leaflet")) as LeafletModule & { default?: LeafletModule };
  const L: LeafletModule = mod.default ?? mod;

  stage.classList.add("map-stage-tiles");
  const el = document.createElement("div");
  el.className = "map-leaflet";
  stage.appendChild(el);

  const map = L.map(el, { zoomControl: true, attributionControl: true, keyboard: true, zoomSnap: 0.25 });
  const container = map.getContainer();
  container.setAttribute("role", "region");
  container.setAttribute("aria-label", `${mapLabel(model)}. Drag or use the arrow keys to move the map; press + and − to zoom.`);
  new (cspFriendlyTileLayer(L))(tiles.url, {
    // The attribution is shown as text: nothing from configuration becomes markup.
    attribution: escapeHtml(tiles.attribution || ""),
    maxZoom: 19,
    referrerPolicy: "no-referrer",
  } as Leaflet.TileLayerOptions).addTo(map);
  const scale = L.control.scale({ metric: true, imperial: false, maxWidth: 120 }).addTo(map);
  scale.getContainer()?.classList.add("map-scale");
  map.attributionControl.setPrefix(false);

  // Set the view before adding layers: Leaflet adds them (and creates their
  // elements, which get data-route/data-seq) only once the map has a view.
  const bounds = L.latLngBounds([]);
  for (const r of model.drawn) {
    for (const p of r.line) bounds.extend(p);
    for (const s of r.stops) bounds.extend([s.lat, s.lon]);
  }
  for (const p of model.places) bounds.extend([p.lat, p.lon]);
  const fit = () => {
    if (bounds.isValid()) map.fitBounds(bounds, { padding: [32, 32], maxZoom: 16 });
    else map.setView([0, 0], 2);
  };
  fit();

  const routeLayers: { index: number; casing: Leaflet.Polyline; line: Leaflet.Polyline; markers: Leaflet.Marker[] }[] = [];
  for (const r of model.drawn) {
    const idx = String(r.index);
    const casing = L.polyline(r.line, { className: "route-casing", color: "#ffffff", weight: 7, opacity: 0.9, interactive: false }).addTo(map);
    const line = L.polyline(r.line, { className: "route-path", color: r.color, weight: 4, opacity: 1 }).addTo(map);
    line.getElement()?.setAttribute("data-route", idx);
    line.bindTooltip(`${r.route.label || r.route.vehicleRef} · ${plural(r.stops.length, "stop")}`, { sticky: true });

    const markers = r.stops.map((s) => {
      // The icon element is a transparent box; the visible disc inside it
      // shrinks with the level of detail (see map.css).
      const disc = document.createElement("span");
      disc.className = "stop-marker-disc";
      disc.textContent = String(s.seq);
      disc.style.backgroundColor = r.color;
      const long = String(s.seq).length >= 3;
      const size = long ? 24 : 20;
      const icon = L.divIcon({
        className: long ? "stop-marker is-long" : "stop-marker",
        html: disc,
        iconSize: [size, size],
        iconAnchor: [size / 2, size / 2],
      });
      const m = L.marker([s.lat, s.lon], { icon, title: stopTitle(s), keyboard: false, riseOnHover: true }).addTo(map);
      const iconEl = m.getElement();
      if (iconEl) {
        iconEl.dataset.route = idx;
        iconEl.dataset.seq = String(s.seq);
      }
      return m;
    });
    routeLayers.push({ index: r.index, casing, line, markers });
  }

  // Where routes start and end: the depot (a house), a vehicle's own start or end.
  for (const place of model.places) {
    const glyph = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    glyph.setAttribute("viewBox", "-12 -12 24 24");
    glyph.setAttribute("width", "24");
    glyph.setAttribute("height", "24");
    glyph.setAttribute("aria-hidden", "true");
    const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", placeGlyph[place.kind]);
    path.setAttribute("fill", "#ffffff");
    glyph.appendChild(path);
    const wrap = document.createElement("span");
    wrap.appendChild(glyph);
    const m = L.marker([place.lat, place.lon], {
      icon: L.divIcon({ className: `place-marker ${placeClass[place.kind]}`, html: wrap, iconSize: [26, 26], iconAnchor: [13, 13] }),
      title: place.title,
      keyboard: false,
      zIndexOffset: 1000,
    }).addTo(map);
    const el = m.getElement();
    if (el) setPlaceData(el, place);
  }

  // Markers show their numbers only when the stops have room for them.
  const spacing = medianSpacing(model.drawn.flatMap((r) => r.stops.map((s) => project(s.lat, s.lon))));
  const applyDetail = () => {
    container.dataset.detail = markerDetail(spacing * 256 * Math.pow(2, map.getZoom()));
  };
  map.on("zoomend", applyDetail);
  applyDetail();

  // A "Fit to routes" button under Leaflet's zoom control.
  const fitControl = new L.Control({ position: "topleft" });
  fitControl.onAdd = () => {
    const box = L.DomUtil.create("div", "leaflet-bar map-fit-control");
    const b = L.DomUtil.create("button", "map-fit", box) as HTMLButtonElement;
    b.type = "button";
    b.setAttribute("aria-label", "Fit to routes");
    b.title = "Fit to routes";
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 20 20");
    svg.setAttribute("width", "18");
    svg.setAttribute("height", "18");
    svg.setAttribute("aria-hidden", "true");
    const p = document.createElementNS("http://www.w3.org/2000/svg", "path");
    p.setAttribute("d", "M3 7.5V3h4.5M12.5 3H17v4.5M17 12.5V17h-4.5M7.5 17H3v-4.5");
    p.setAttribute("fill", "none");
    p.setAttribute("stroke", "currentColor");
    p.setAttribute("stroke-width", "2");
    p.setAttribute("stroke-linecap", "round");
    svg.appendChild(p);
    b.appendChild(svg);
    L.DomEvent.disableClickPropagation(box);
    L.DomEvent.on(b, "click", () => {
      userMoved = false;
      fit();
    });
    return box;
  };
  fitControl.addTo(map);

  // The stage may get its size after mounting (layout, a hidden tab): keep Leaflet informed.
  // Until the user moves the map, a resize fits the routes again.
  let userMoved = false;
  const ac = new AbortController();
  for (const type of ["pointerdown", "wheel", "keydown"] as const) {
    container.addEventListener(type, (e) => {
      if (!(e.target instanceof Element && e.target.closest(".map-fit"))) userMoved = true;
    }, { signal: ac.signal, passive: true });
  }
  let observer: ResizeObserver | null = null;
  if (typeof ResizeObserver === "function") {
    observer = new ResizeObserver(() => {
      map.invalidateSize();
      if (!userMoved && stage.clientWidth > 0 && stage.clientHeight > 0) fit();
    });
    observer.observe(stage);
  }

  return {
    highlight(index: number | null) {
      for (const r of routeLayers) {
        const dim = index !== null && r.index !== index;
        r.line.setStyle({ opacity: dim ? 0.25 : 1 });
        r.casing.setStyle({ opacity: dim ? 0.2 : 0.9 });
        for (const m of r.markers) m.setOpacity(dim ? 0.3 : 1);
        if (index !== null && r.index === index) {
          r.casing.bringToFront();
          r.line.bringToFront();
          for (const m of r.markers) m.setZIndexOffset(500);
        } else {
          for (const m of r.markers) m.setZIndexOffset(0);
        }
      }
    },
    destroy() {
      ac.abort();
      observer?.disconnect();
      map.remove();
      el.remove();
      stage.classList.remove("map-stage-tiles");
    },
  };
}
