// Bundle the extension (vscode-languageclient included) into dist/extension.js; vendor uPlot (MIT, from npm) into
// the Python package's assets (trainlint report inlines it) and put the curves view's scripts into media/.
import { copyFileSync, mkdirSync } from "node:fs";
import { build } from "esbuild";

const vendor = "../server/trainlint/assets/vendor";
mkdirSync(vendor, { recursive: true });
copyFileSync("node_modules/uplot/dist/uPlot.iife.min.js", `${vendor}/uPlot.iife.min.js`);
copyFileSync("node_modules/uplot/dist/uPlot.min.css", `${vendor}/uPlot.min.css`);
copyFileSync("node_modules/uplot/LICENSE", `${vendor}/uPlot.LICENSE`);
mkdirSync("media", { recursive: true });
for (const f of ["vendor/uPlot.iife.min.js", "vendor/uPlot.min.css", "vendor/uPlot.LICENSE", "curves.js", "curves.css"]) {
  copyFileSync(`../server/trainlint/assets/${f}`, `media/${f.replace("vendor/", "")}`);
}

await build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  external: ["vscode"],
  format: "cjs",
  platform: "node",
  target: "node18",
  sourcemap: false,
  minify: true,
  logLevel: "warning",
});
