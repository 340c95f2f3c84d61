// Builds the console into OUT (default dist/): assets/app-<hash>.js and .css (bundled, minified,
// content-hashed) and index.html referencing them. No inline script or style, so the strict CSP
// (default-src 'self') holds. Run by CMake: node build.mjs --out <dir>.
import * as esbuild from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const out = path.resolve(outIndex >= 0 ? args[outIndex + 1] : path.join(here, 'dist'));

await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'assets'), { recursive: true });

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: { app: 'src/main.jsx' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  outdir: path.join(out, 'assets'),
  metafile: true,
  legalComments: 'eof',
  logLevel: 'warning',
});

let js;
let css;
for (const [file, meta] of Object.entries(result.metafile.outputs)) {
  if (meta.entryPoint) {
    js = path.basename(file);
    if (meta.cssBundle) css = path.basename(meta.cssBundle);
  }
}
if (!js || !css) throw new Error('build.mjs: esbuild wrote no app script or stylesheet');

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>refgate console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/${css}">
<script type="module" src="assets/${js}"></script>
</head>
<body>
<div id="app"><noscript>The refgate console needs JavaScript.</noscript></div>
</body>
</html>
`;
await writeFile(path.join(out, 'index.html'), html);
console.log(`console built into ${out}: ${js}, ${css}`);
