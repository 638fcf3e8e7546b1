// The offline map: an SVG drawing in Web Mercator, no network at all.
//
// The view is a centre in world units (see projection.ts) and a scale in
// pixels per world unit; the SVG's viewBox is its pixel size, and every
// render re-projects the routes and moves the markers, so strokes, numbers
// and markers keep their on-screen size at every zoom.

import { mapLabel, plural, stopTitle, type MapModel } from "./model";
import { placeClass, placeGlyph, setPlaceData } from "./places";
import { markerDetail, medianSpacing, metresPerWorldUnit, niceScale, project, type Detail } from "./projection";
import type { Renderer } from "./renderer";

const SVG_NS = "http://www.w3.org/2000/svg";
/** Closest zoom: about 0.15 m per pixel. */
const MAX_SCALE = 256 * 2 ** 20;
/** Fitting never zooms closer than street level (one stop, or stops on one spot). */
const FIT_MAX_SCALE = 256 * 2 ** 16;
const PAD_X = 52; // room for the zoom buttons on the right
const PAD_Y = 36;
const PAN_STEP = 80; // px per arrow key press
const ARROW_SPACING = 90; // px between direction chevrons along a route
const ANIMATION_MS = 220;
/** Marker radius per level of detail (3-digit numbers get 2 px more). */
const MARKER_R: Record<Detail, number> = { full: 9.5, small: 7.5, dot: 4.5 };


interface View {
  cx: number;
  cy: number;
  scale: number;
}

let mapCounter = 0;

type Attrs = Record<string, string | number>;

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, parent?: Element): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (parent) parent.appendChild(el);
  return el;
}

function htmlEl<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, parent?: Element): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (parent) parent.appendChild(el);
  return el;
}

/** A 20×20 stroked icon for a control button. */
function icon(d: string): SVGSVGElement {
  const svg = svgEl("svg", { viewBox: "0 0 20 20", width: 20, height: 20, "aria-hidden": "true", focusable: "false" });
  svgEl("path", { d, fill: "none", stroke: "currentColor", "stroke-width": 2, "stroke-linecap": "round", "stroke-linejoin": "round" }, svg);
  return svg;
}

function f1(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

function prefersReducedMotion(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

export function mountSvgMap(stage: HTMLElement, model: MapModel): Renderer {
  const ac = new AbortController();
  const on = <K extends keyof HTMLElementEventMap>(
    target: HTMLElement | SVGElement,
    type: K,
    fn: (e: HTMLElementEventMap[K]) => void,
    opts: AddEventListenerOptions = {},
  ) => target.addEventListener(type, fn as EventListener, { ...opts, signal: ac.signal });

  const id = ++mapCounter;
  stage.classList.add("map-stage-svg");

  // World coordinates of everything drawn.
  const routes = model.drawn.map((r) => ({
    model: r,
    line: r.line.map(([lat, lon]) => project(lat, lon)),
    stops: r.stops.map((s) => ({ stop: s, at: project(s.lat, s.lon) })),
  }));
  const places = model.places.map((p) => ({ place: p, at: project(p.lat, p.lon) }));
  const spacing = medianSpacing(routes.flatMap((r) => r.stops.map((s) => s.at)));

  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  const extend = ([x, y]: [number, number]) => {
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  };
  for (const r of routes) {
    r.line.forEach(extend);
    r.stops.forEach((s) => extend(s.at));
  }
  places.forEach((p) => extend(p.at));
  const hasBounds = minX <= maxX;

  if (!hasBounds) {
    const empty = htmlEl("p", "map-empty", stage);
    empty.setAttribute("role", "note");
    empty.textContent = "There are no stops to show on the map.";
    return {
      highlight() {},
      destroy() {
        ac.abort();
        empty.remove();
        stage.classList.remove("map-stage-svg");
      },
    };
  }

  // --- DOM -------------------------------------------------------------
  const hintId = `map-hint-${id}`;
  const svg = svgEl("svg", {
    class: "map-svg",
    role: "img",
    tabindex: 0,
    "aria-label": mapLabel(model),
    "aria-describedby": hintId,
  });
  stage.appendChild(svg);
  const hint = htmlEl("p", "map-hint", stage);
  hint.id = hintId;
  hint.textContent = "Drag or use the arrow keys to move the map; scroll or press + and − to zoom.";

  const grid = svgEl("path", { class: "map-grid", "aria-hidden": "true" }, svg);
  const routeLayer = svgEl("g", { class: "map-routes" }, svg);
  const stopLayer = svgEl("g", { class: "map-stops" }, svg);
  const depotLayer = svgEl("g", { class: "map-depot" }, svg);

  const routeEls = routes.map((r) => {
    const idx = String(r.model.index);
    const g = svgEl("g", { class: "map-route", "data-route": idx }, routeLayer);
    const casing = svgEl("path", { class: "route-casing" }, g);
    const path = svgEl("path", { class: "route-path", "data-route": idx, stroke: r.model.color }, g);
    const arrows = svgEl("path", { class: "route-arrows", "data-route": idx }, g);
    const title = svgEl("title", {}, path);
    title.textContent = `${r.model.route.label || r.model.route.vehicleRef} · ${plural(r.stops.length, "stop")}`;
    return { g, casing, path, arrows };
  });

  const circles: { el: SVGCircleElement; long: boolean }[] = [];
  const stopEls = routes.map((r) =>
    r.stops.map(({ stop }) => {
      const g = svgEl("g", {
        class: "stop-marker",
        "data-route": String(r.model.index),
        "data-seq": String(stop.seq),
      }, stopLayer);
      const title = svgEl("title", {}, g);
      title.textContent = stopTitle(stop);
      const text = String(stop.seq);
      circles.push({ el: svgEl("circle", { r: MARKER_R.full, fill: r.model.color }, g), long: text.length >= 3 });
      const label = svgEl("text", { "text-anchor": "middle", dy: "0.35em", class: text.length >= 3 ? "is-long" : "" }, g);
      label.textContent = text;
      return g;
    }),
  );

  // Where routes start and end: the depot (a house), a vehicle's own start or end.
  const placeEls = places.map(({ place }) => {
    const g = svgEl("g", { class: `place-marker ${placeClass[place.kind]}` }, depotLayer);
    setPlaceData(g, place);
    svgEl("title", {}, g).textContent = place.title;
    svgEl("rect", { x: -12, y: -12, width: 24, height: 24, rx: 5 }, g);
    svgEl("path", { class: "place-glyph", d: placeGlyph[place.kind] }, g);
    return g;
  });

  const controls = htmlEl("div", "map-controls", stage);
  controls.setAttribute("role", "group");
  controls.setAttribute("aria-label", "Map controls");
  const button = (cls: string, label: string, d: string) => {
    const b = htmlEl("button", `map-button ${cls}`, controls);
    b.type = "button";
    b.setAttribute("aria-label", label);
    b.title = label;
    b.appendChild(icon(d));
    return b;
  };
  const zoomInBtn = button("map-zoom-in", "Zoom in", "M10 4v12M4 10h12");
  const zoomOutBtn = button("map-zoom-out", "Zoom out", "M4 10h12");
  const fitBtn = button("map-fit", "Fit to routes", "M3 7.5V3h4.5M12.5 3H17v4.5M17 12.5V17h-4.5M7.5 17H3v-4.5");

  const scaleEl = htmlEl("div", "map-scale", stage);
  const scaleLabel = htmlEl("span", "map-scale-label", scaleEl);
  const scaleBar = htmlEl("span", "map-scale-bar", scaleEl);
  scaleBar.setAttribute("aria-hidden", "true");

  // --- view --------------------------------------------------------------
  let width = 0;
  let height = 0;
  let view: View = { cx: (minX + maxX) / 2, cy: (minY + maxY) / 2, scale: 1024 };
  let fitted = false; // a fit has happened at a real size
  let userMoved = false; // the user zoomed or panned since the last fit
  let frame = 0;
  let anim = 0;
  let animTarget: View | null = null;
  let detail: Detail | null = null;

  const fitView = (): View => {
    const w = Math.max(1, width - 2 * PAD_X);
    const h = Math.max(1, height - 2 * PAD_Y);
    const dx = maxX - minX;
    const dy = maxY - minY;
    let scale = Math.min(dx > 0 ? w / dx : Infinity, dy > 0 ? h / dy : Infinity, FIT_MAX_SCALE);
    if (!Number.isFinite(scale) || scale <= 0) scale = FIT_MAX_SCALE;
    return { cx: (minX + maxX) / 2, cy: (minY + maxY) / 2, scale };
  };
  const scaleLimits = (): [number, number] => {
    const fit = fitView().scale;
    return [Math.min(fit, Math.max(256, fit / 16)), Math.max(MAX_SCALE, fit)];
  };
  const clampScale = (s: number) => {
    const [lo, hi] = scaleLimits();
    return Math.min(hi, Math.max(lo, s));
  };
  /** Keeps the drawing from being panned entirely out of sight. */
  const clampCentre = (v: View): View => {
    const mx = width / 2 / v.scale;
    const my = height / 2 / v.scale;
    return {
      scale: v.scale,
      cx: Math.min(maxX + mx * 0.8, Math.max(minX - mx * 0.8, v.cx)),
      cy: Math.min(maxY + my * 0.8, Math.max(minY - my * 0.8, v.cy)),
    };
  };

  const measure = (): boolean => {
    const rect = svg.getBoundingClientRect();
    const w = Math.round(rect.width);
    const h = Math.round(rect.height);
    if (w === width && h === height) return false;
    width = w;
    height = h;
    svg.setAttribute("viewBox", `0 0 ${Math.max(1, w)} ${Math.max(1, h)}`);
    return true;
  };

  // --- drawing -------------------------------------------------------------
  const render = () => {
    frame = 0;
    if (width <= 0 || height <= 0) return;
    const { cx, cy, scale } = view;
    const hw = width / 2;
    const hh = height / 2;
    const sx = (x: number) => (x - cx) * scale + hw;
    const sy = (y: number) => (y - cy) * scale + hh;
    const margin = 20;

    routes.forEach((r, i) => {
      // Project, dropping points closer than a pixel to the previous one.
      const xs: number[] = [];
      const ys: number[] = [];
      const n = r.line.length;
      for (let k = 0; k < n; k++) {
        const X = sx(r.line[k][0]);
        const Y = sy(r.line[k][1]);
        const last = xs.length - 1;
        if (last >= 0 && k < n - 1 && Math.abs(X - xs[last]) + Math.abs(Y - ys[last]) < 1) continue;
        xs.push(X);
        ys.push(Y);
      }
      let d = "";
      for (let k = 0; k < xs.length; k++) d += `${k === 0 ? "M" : "L"}${f1(xs[k])} ${f1(ys[k])}`;
      if (xs.length === 1) d += `L${f1(xs[0])} ${f1(ys[0])}`;
      const els = routeEls[i];
      els.path.setAttribute("d", d);
      els.casing.setAttribute("d", d);

      // Direction chevrons every ARROW_SPACING px along the line, only where visible.
      let a = "";
      let travelled = 0;
      let nextAt = ARROW_SPACING / 2;
      for (let k = 1; k < xs.length; k++) {
        const x0 = xs[k - 1], y0 = ys[k - 1], x1 = xs[k], y1 = ys[k];
        const len = Math.hypot(x1 - x0, y1 - y0);
        const end = travelled + len;
        const visible = !(
          (x0 < -margin && x1 < -margin) || (x0 > width + margin && x1 > width + margin) ||
          (y0 < -margin && y1 < -margin) || (y0 > height + margin && y1 > height + margin)
        );
        if (!visible || len === 0) {
          if (nextAt < end) nextAt += Math.ceil((end - nextAt) / ARROW_SPACING) * ARROW_SPACING;
          travelled = end;
          continue;
        }
        const ux = (x1 - x0) / len, uy = (y1 - y0) / len;
        for (; nextAt < end; nextAt += ARROW_SPACING) {
          const t = nextAt - travelled;
          const px = x0 + ux * t, py = y0 + uy * t;
          if (px < -margin || px > width + margin || py < -margin || py > height + margin) continue;
          const bx = px - ux * 2.2, by = py - uy * 2.2;
          a += `M${f1(bx - uy * 2.6)} ${f1(by + ux * 2.6)}L${f1(px + ux * 2.2)} ${f1(py + uy * 2.2)}L${f1(bx + uy * 2.6)} ${f1(by - ux * 2.6)}`;
        }
        travelled = end;
      }
      els.arrows.setAttribute("d", a);

      r.stops.forEach((s, k) => {
        const X = sx(s.at[0]);
        const Y = sy(s.at[1]);
        const g = stopEls[i][k];
        const off = X < -margin || X > width + margin || Y < -margin || Y > height + margin;
        g.classList.toggle("is-offscreen", off);
        g.setAttribute("transform", `translate(${f1(X)} ${f1(Y)})`);
      });
    });

    // Level of detail: numbers only when the stops have room for them.
    const want = markerDetail(spacing * scale);
    if (want !== detail) {
      detail = want;
      svg.setAttribute("data-detail", detail);
      for (const c of circles) c.el.setAttribute("r", String(MARKER_R[detail] + (c.long && detail !== "dot" ? 2 : 0)));
    }

    places.forEach((p, i) => placeEls[i].setAttribute("transform", `translate(${f1(sx(p.at[0]))} ${f1(sy(p.at[1]))})`));

    // Scale bar, and a faint grid with the scale bar's spacing.
    const mpp = metresPerWorldUnit(cy) / scale;
    const bar = niceScale(mpp, Math.min(120, Math.max(60, width / 4)));
    scaleLabel.textContent = bar.label;
    scaleBar.style.width = `${Math.round(bar.px)}px`;
    const step = bar.px; // grid spacing in px
    let gd = "";
    if (step >= 24) {
      const gx0 = Math.floor((cx * scale - hw) / step) * step;
      const gy0 = Math.floor((cy * scale - hh) / step) * step;
      for (let gx = gx0; gx <= cx * scale + hw; gx += step) {
        const X = gx - cx * scale + hw;
        gd += `M${f1(X)} 0V${height}`;
      }
      for (let gy = gy0; gy <= cy * scale + hh; gy += step) {
        const Y = gy - cy * scale + hh;
        gd += `M0 ${f1(Y)}H${width}`;
      }
    }
    grid.setAttribute("d", gd);
  };

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };
  const stopAnimation = () => {
    if (anim) cancelAnimationFrame(anim);
    anim = 0;
    animTarget = null;
  };
  const setView = (v: View) => {
    view = clampCentre({ ...v, scale: clampScale(v.scale) });
    schedule();
  };

  /**
   * Animates to target, keeping the screen point (px, py) on the world point
   * it shows in target (for a zoom, the point under the pointer stays put).
   */
  const animateTo = (target: View, px: number, py: number) => {
    stopAnimation();
    if (prefersReducedMotion()) {
      view = target;
      schedule();
      return;
    }
    const from = view;
    const hx = px - width / 2, hy = py - height / 2;
    const wx = target.cx + hx / target.scale, wy = target.cy + hy / target.scale;
    // how far the start is from that path; faded out during the animation
    const ox = from.cx - (wx - hx / from.scale), oy = from.cy - (wy - hy / from.scale);
    const l0 = Math.log(from.scale), l1 = Math.log(target.scale);
    const t0 = performance.now();
    const step = (now: number) => {
      const t = Math.min(1, (now - t0) / ANIMATION_MS);
      const e = 1 - Math.pow(1 - t, 3);
      const scale = Math.exp(l0 + (l1 - l0) * e);
      if (t < 1) {
        view = { scale, cx: wx - hx / scale + ox * (1 - e), cy: wy - hy / scale + oy * (1 - e) };
        anim = requestAnimationFrame(step);
      } else {
        view = target;
        anim = 0;
        animTarget = null;
      }
      render();
    };
    animTarget = target;
    anim = requestAnimationFrame(step);
  };

  /** Zooms by factor keeping the screen point (px, py) where it is. */
  const zoomAround = (px: number, py: number, factor: number, animate: boolean) => {
    // Zooms in quick succession add up: start from where a running animation ends.
    const base = animTarget ?? view;
    userMoved = true;
    const scale = clampScale(base.scale * factor);
    const hx = px - width / 2, hy = py - height / 2;
    const wx = base.cx + hx / base.scale, wy = base.cy + hy / base.scale;
    const target = clampCentre({ scale, cx: wx - hx / scale, cy: wy - hy / scale });
    if (animate) animateTo(target, px, py);
    else {
      stopAnimation();
      view = target;
      schedule();
    }
  };

  const panBy = (dx: number, dy: number) => {
    stopAnimation();
    userMoved = true;
    setView({ ...view, cx: view.cx - dx / view.scale, cy: view.cy - dy / view.scale });
  };

  const fit = (animate: boolean) => {
    userMoved = false;
    const target = fitView();
    if (!animate || !fitted) {
      stopAnimation();
      fitted = width > 0 && height > 0;
      view = target;
      schedule();
      return;
    }
    animateTo(target, width / 2, height / 2);
  };

  // --- input ---------------------------------------------------------------
  const local = (e: { clientX: number; clientY: number }): [number, number] => {
    const rect = svg.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  };

  on(zoomInBtn, "click", () => zoomAround(width / 2, height / 2, 2, true));
  on(zoomOutBtn, "click", () => zoomAround(width / 2, height / 2, 0.5, true));
  on(fitBtn, "click", () => fit(true));

  on(svg, "wheel", (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? height : 1;
    // ctrl+wheel is a trackpad pinch, whose deltas are small
    const factor = Math.min(2, Math.max(0.5, Math.exp(-e.deltaY * unit * (e.ctrlKey ? 0.01 : 0.002))));
    const [px, py] = local(e);
    zoomAround(px, py, factor, false);
  }, { passive: false });

  on(svg, "dblclick", (e) => {
    e.preventDefault();
    const [px, py] = local(e);
    zoomAround(px, py, e.shiftKey ? 0.5 : 2, true);
  });

  const pointers = new Map<number, [number, number]>();
  on(svg, "pointerdown", (e) => {
    if (e.pointerType === "mouse" && e.button !== 0) return;
    stopAnimation();
    pointers.set(e.pointerId, local(e));
    try {
      svg.setPointerCapture(e.pointerId);
    } catch {
      // a synthetic or already released pointer: dragging still works while over the map
    }
    svg.classList.add("is-dragging");
  });
  on(svg, "pointermove", (e) => {
    const prev = pointers.get(e.pointerId);
    if (!prev) return;
    const now = local(e);
    if (pointers.size === 1) {
      pointers.set(e.pointerId, now);
      if (now[0] !== prev[0] || now[1] !== prev[1]) panBy(now[0] - prev[0], now[1] - prev[1]);
      return;
    }
    // Pinch: the first two pointers.
    const ids = [...pointers.keys()].slice(0, 2);
    if (!ids.includes(e.pointerId)) return;
    const before = ids.map((k) => pointers.get(k)!);
    pointers.set(e.pointerId, now);
    const after = ids.map((k) => pointers.get(k)!);
    const mid = (p: [number, number][]) => [(p[0][0] + p[1][0]) / 2, (p[0][1] + p[1][1]) / 2];
    const dist = (p: [number, number][]) => Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
    const m0 = mid(before), m1 = mid(after);
    panBy(m1[0] - m0[0], m1[1] - m0[1]);
    const d0 = dist(before), d1 = dist(after);
    if (d0 > 0 && d1 > 0) zoomAround(m1[0], m1[1], d1 / d0, false);
  });
  const release = (e: PointerEvent) => {
    pointers.delete(e.pointerId);
    if (pointers.size === 0) svg.classList.remove("is-dragging");
  };
  on(svg, "pointerup", release);
  on(svg, "pointercancel", release);
  on(svg, "lostpointercapture", release);

  on(svg, "keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const step = e.shiftKey ? PAN_STEP * 3 : PAN_STEP;
    switch (e.key) {
      case "ArrowLeft": panBy(step, 0); break;
      case "ArrowRight": panBy(-step, 0); break;
      case "ArrowUp": panBy(0, step); break;
      case "ArrowDown": panBy(0, -step); break;
      case "+": case "=": zoomAround(width / 2, height / 2, 2, true); break;
      case "-": case "_": zoomAround(width / 2, height / 2, 0.5, true); break;
      case "0": case "Home": fit(true); break;
      default: return;
    }
    e.preventDefault();
  });

  // --- size ----------------------------------------------------------------
  // ResizeObserver calls back after layout and before paint: draw right away,
  // so a resized map never shows a stale frame.
  const onResize = () => {
    if (!measure()) return;
    if (!fitted || !userMoved) fit(false);
    else view = clampCentre(view);
    if (frame) cancelAnimationFrame(frame);
    render();
  };
  let observer: ResizeObserver | null = null;
  if (typeof ResizeObserver === "function") {
    observer = new ResizeObserver(onResize);
    observer.observe(svg);
  } else {
    window.addEventListener("resize", onResize, { signal: ac.signal });
  }
  measure();
  fit(false);
  render(); // draw now, so the first paint already shows the routes

  return {
    highlight(index: number | null) {
      svg.classList.toggle("has-highlight", index !== null);
      routes.forEach((r, i) => {
        const on = r.model.index === index;
        routeEls[i].g.classList.toggle("is-highlighted", on);
        for (const g of stopEls[i]) g.classList.toggle("is-highlighted", on);
        if (on) {
          routeLayer.appendChild(routeEls[i].g);
          for (const g of stopEls[i]) stopLayer.appendChild(g);
        }
      });
    },
    destroy() {
      ac.abort();
      observer?.disconnect();
      if (frame) cancelAnimationFrame(frame);
      stopAnimation();
      svg.remove();
      hint.remove();
      controls.remove();
      scaleEl.remove();
      stage.classList.remove("map-stage-svg");
    },
  };
}
