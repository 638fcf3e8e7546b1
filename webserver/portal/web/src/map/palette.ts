// Route colours. Each has at least 4.5:1 contrast against white (so the
// white stop numbers on a marker meet WCAG AA for text, and the line meets
// the 3:1 non-text bar on a light map); the first eight are the most
// distinct from each other (CIEDE2000 ≥ 18), all twelve ≥ 11. None is
// near-black, which is the depot's colour.
const PALETTE = [
  "#1f6fd1", // blue
  "#d1302a", // red
  "#1b7f3b", // green
  "#8a3ab9", // purple
  "#b35900", // dark orange
  "#00818a", // teal
  "#c2187a", // raspberry
  "#6b6b00", // olive
  "#27348b", // navy
  "#7a4a1e", // brown
  "#c81fc0", // magenta
  "#5a6b7d", // slate
] as const;

/** The colour of the route at index (0-based); wraps around the palette. */
export function routeColor(index: number): string {
  const i = Number.isFinite(index) ? Math.trunc(index) : 0;
  const n = PALETTE.length;
  return PALETTE[((i % n) + n) % n];
}

export const PALETTE_SIZE = PALETTE.length;
