// The legend (#map-legend): one li[data-route] per route with its colour
// swatch, label and stop count. Hovering or focusing an entry highlights its
// route on the map; pressing it keeps the highlight until pressed again.

import { plural, type MapModel } from "./model";

const SVG_NS = "http://www.w3.org/2000/svg";

export interface Legend {
  element: HTMLElement;
  destroy(): void;
}

export function renderLegend(model: MapModel, highlight: (index: number | null) => void): Legend {
  const ac = new AbortController();
  const root = document.createElement("div");
  root.id = "map-legend";
  root.className = "map-legend";
  const list = document.createElement("ul");
  list.setAttribute("aria-label", "Routes on the map");
  root.appendChild(list);

  let pinned: number | null = null;
  let hovered: number | null = null;
  const buttons: HTMLButtonElement[] = [];
  const apply = () => {
    highlight(hovered ?? pinned);
    buttons.forEach((b) => b.setAttribute("aria-pressed", String(Number(b.dataset.route) === pinned)));
  };

  for (const r of model.all) {
    const li = document.createElement("li");
    li.dataset.route = String(r.index);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "map-legend-item";
    button.dataset.route = String(r.index);
    button.setAttribute("aria-pressed", "false");
    button.title = "Highlight this route on the map";

    const swatch = document.createElementNS(SVG_NS, "svg");
    swatch.setAttribute("class", "map-legend-swatch");
    swatch.setAttribute("viewBox", "0 0 24 12");
    swatch.setAttribute("width", "24");
    swatch.setAttribute("height", "12");
    swatch.setAttribute("aria-hidden", "true");
    swatch.setAttribute("focusable", "false");
    const line = document.createElementNS(SVG_NS, "path");
    line.setAttribute("d", "M2 6H22");
    line.setAttribute("stroke", r.color);
    line.setAttribute("stroke-width", "4");
    line.setAttribute("stroke-linecap", "round");
    swatch.appendChild(line);
    const dot = document.createElementNS(SVG_NS, "circle");
    dot.setAttribute("cx", "12");
    dot.setAttribute("cy", "6");
    dot.setAttribute("r", "5");
    dot.setAttribute("fill", r.color);
    dot.setAttribute("stroke", "#fff");
    dot.setAttribute("stroke-width", "1.5");
    swatch.appendChild(dot);

    const label = document.createElement("span");
    label.className = "map-legend-label";
    label.textContent = r.route.label || r.route.vehicleRef || `Route ${r.index + 1}`;
    const count = document.createElement("span");
    count.className = "map-legend-count";
    count.textContent = plural(r.stops.length, "stop");

    button.append(swatch, label, count);
    li.appendChild(button);
    list.appendChild(li);
    buttons.push(button);

    if (r.stops.length === 0) {
      button.disabled = true;
      continue;
    }
    const enter = () => {
      hovered = r.index;
      apply();
    };
    const leave = () => {
      if (hovered === r.index) hovered = null;
      apply();
    };
    const opts = { signal: ac.signal };
    button.addEventListener("pointerenter", enter, opts);
    button.addEventListener("pointerleave", leave, opts);
    button.addEventListener("focus", enter, opts);
    button.addEventListener("blur", leave, opts);
    button.addEventListener("click", () => {
      pinned = pinned === r.index ? null : r.index;
      apply();
    }, opts);
  }

  return {
    element: root,
    destroy() {
      ac.abort();
      root.remove();
    },
  };
}
