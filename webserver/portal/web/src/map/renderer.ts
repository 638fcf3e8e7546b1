/** What index.ts needs from a map drawing (SVG or Leaflet). */
export interface Renderer {
  /** Emphasises the route with this index (dimming the others), or none. */
  highlight(index: number | null): void;
  destroy(): void;
}
