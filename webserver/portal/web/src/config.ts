// Settings the server passes to the script through <meta> tags in the
// page shell (the CSP allows no inline script).

function meta(name: string): string | null {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? null;
}

/** tiles is the map tile layer (--map-tile-url), or undefined to draw the offline map. */
export function tiles(): { url: string; attribution: string } | undefined {
  const url = meta("routeopt-map-tile-url");
  if (!url) return undefined;
  return { url, attribution: meta("routeopt-map-tile-attribution") ?? "" };
}
