// Builds dist/: src/main.js and the CSS it imports bundled into dist/assets/ under names that
// carry a content hash, and dist/index.html pointing at them. The broker embeds dist/ at its
// build (cmake/embed_web.cmake), so dist/ is committed.
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');

await rm(dist, { recursive: true, force: true });
await mkdir(path.join(dist, 'assets'), { recursive: true });

const result = await build({
  entryPoints: [path.join(here, 'src/main.js')],
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  legalComments: 'none',
  outdir: path.join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

// The entry's script and its stylesheet, as the page references them.
const outputs = Object.entries(result.metafile.outputs);
const script = outputs.find(([, o]) => o.entryPoint)?.[0];
const style = outputs.find(([file]) => file.endsWith('.css'))?.[0];
if (!script || !style) throw new Error('build: the bundle has no script or no stylesheet');
const url = (file) => '/assets/' + path.basename(file);

const template = await readFile(path.join(here, 'src/index.html'), 'utf8');
const page = template.replace('%SCRIPT%', url(script)).replace('%STYLE%', url(style));
await writeFile(path.join(dist, 'index.html'), page);
console.log(`build: ${url(script)} ${url(style)}`);
