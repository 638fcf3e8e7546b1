// Google's encoded polyline algorithm format, precision 1e5:
// https://developers.google.com/maps/documentation/utilities/polylinealgorithm

/**
 * Decodes an encoded polyline into [lat, lon] pairs. Never throws and never
 * loops forever: on truncated or corrupt input it returns the points decoded
 * so far.
 */
export function decodePolyline(encoded: string): [number, number][] {
  const points: [number, number][] = [];
  if (typeof encoded !== "string") return points;
  const n = encoded.length;
  let i = 0;
  let lat = 0;
  let lon = 0;

  // Reads one zig-zag encoded, 5-bit-chunked signed value; null when the
  // input ends mid-value or holds a character outside the alphabet.
  const next = (): number | null => {
    let result = 0;
    let factor = 1;
    for (let chunks = 0; chunks < 7; chunks++) {
      if (i >= n) return null;
      const b = encoded.charCodeAt(i++) - 63;
      if (b < 0 || b > 63) return null;
      result += (b & 0x1f) * factor;
      factor *= 32;
      if (b < 0x20) return result % 2 === 1 ? -(result + 1) / 2 : result / 2;
    }
    return null; // more than 35 bits: not a coordinate
  };

  while (i < n) {
    const dLat = next();
    if (dLat === null) break;
    const dLon = next();
    if (dLon === null) break;
    lat += dLat;
    lon += dLon;
    points.push([lat / 1e5, lon / 1e5]);
  }
  return points;
}
