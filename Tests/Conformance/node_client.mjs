// The Node client of the conformance matrix: fetch() with a FormData of Blobs.
// Usage: node node_client.mjs URL FIXTURES_DIR
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, dir] = process.argv.slice(2);
const form = new FormData();
form.append('title', 'Holiday ☀ 2026');
form.append('token', 'client-supplied');
for (const [field, name, type] of [
  ['upload', 'photo.jpg', 'image/jpeg'],
  ['notes', 'notes.txt', 'text/plain'],
  ['cv', 'résumé 2026.pdf', 'application/octet-stream'],
]) {
  form.append(field, new Blob([readFileSync(join(dir, name))], { type }), name);
}
const response = await fetch(url, { method: 'POST', body: form });
const text = await response.text();
if (response.status !== 200) {
  console.error(`status ${response.status}: ${text}`);
  process.exit(1);
}
process.stdout.write(text);
