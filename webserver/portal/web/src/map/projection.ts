// Web Mercator in "world units": x and y in [0, 1], y growing southwards.

const MAX_LAT = 85.05112878;
/** Earth's equatorial circumference in metres (the length of one world unit at the equator). */
const EQUATOR_M = 40075016.686;

export function project(lat: number, lon: number): [number, number] {
  const phi = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  const x = (lon + 180) / 360;
  const y = 0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI);
  return [x, y];
}

export function unprojectLat(y: number): number {
  return (Math.atan(Math.sinh(Math.PI * (1 - 2 * y))) * 180) / Math.PI;
}

/** Metres per world unit at the latitude of world y. */
export function metresPerWorldUnit(y: number): number {
  return EQUATOR_M * Math.cos((unprojectLat(y) * Math.PI) / 180);
}

export function validLatLon(lat: unknown, lon: unknown): boolean {
  return (
    typeof lat === "number" &&
    typeof lon === "number" &&
    Number.isFinite(lat) &&
    Number.isFinite(lon) &&
    Math.abs(lat) <= 90 &&
    Math.abs(lon) <= 180
  );
}

/**
 * A scale bar: the longest "nice" length (1, 2 or 5 × 10^n metres) that fits
 * in maxPx, its width in pixels and its label ("500 m", "2 km").
 */
export function niceScale(metresPerPx: number, maxPx: number): { metres: number; px: number; label: string } {
  const max = metresPerPx * maxPx;
  let metres = 1;
  if (Number.isFinite(max) && max > 0) {
    const pow = Math.pow(10, Math.floor(Math.log10(max)));
    for (const m of [5, 2, 1]) {
      if (m * pow <= max) {
        metres = m * pow;
        break;
      }
    }
  }
  const label = metres >= 1000 ? `${+(metres / 1000).toPrecision(6)} km` : `${+metres.toPrecision(6)} m`;
  return { metres, px: metres / metresPerPx, label };
}

/**
 * The median distance, in world units, from a stop to its nearest other
 * stop: how crowded the markers are. It picks the markers' level of detail
 * (numbers need room). Exact up to 2,500 stops, sampled beyond.
 */
export function medianSpacing(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Infinity;
  const stride = Math.max(1, Math.ceil(n / 2500));
  const nearest: number[] = [];
  for (let i = 0; i < n; i += stride) {
    let best = Infinity;
    const [x, y] = points[i];
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const d = Math.hypot(points[j][0] - x, points[j][1] - y);
      if (d < best) best = d;
    }
    nearest.push(best);
  }
  nearest.sort((a, b) => a - b);
  return nearest[Math.floor(nearest.length / 2)];
}

/** How much a stop marker shows: its number in full, a smaller number, or just a dot. */
export type Detail = "full" | "small" | "dot";

/** The level of detail for markers whose typical spacing on screen is roomPx. */
export function markerDetail(roomPx: number): Detail {
  return roomPx >= 13 ? "full" : roomPx >= 8 ? "small" : "dot";
}
