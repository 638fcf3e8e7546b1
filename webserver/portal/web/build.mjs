// Builds the portal into ../dist, which the Go binary embeds. The output
// is deterministic (no timestamps, content-hashed chunk names), so
// `make verify` can rebuild and diff it against the committed copy.
import { build } from "esbuild";
import { copyFileSync, rmSync } from "node:fs";

const outdir = new URL("../dist/", import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });

await build({
  entryPoints: { app: "src/main.ts", styles: "src/styles.css" },
  outdir,
  bundle: true,
  format: "esm",
  // Leaflet is loaded only when a tile server is configured.
  splitting: true,
  minify: true,
  sourcemap: false,
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  chunkNames: "chunks/[name]-[hash]",
  assetNames: "assets/[name]-[hash]",
  loader: { ".png": "file", ".svg": "file" },
  legalComments: "linked",
  logLevel: "warning",
});

// Static files served as they are (the page shell links the icon, so the
// browser does not ask for /favicon.ico, which would answer 404).
copyFileSync("src/favicon.svg", outdir + "favicon.svg");
