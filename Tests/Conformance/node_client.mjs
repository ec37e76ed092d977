// The Node client of the conformance matrix: fetch() with a FormData of Blobs.
// Usage: node node_client.mjs URL FIXTURES_DIR            the matrix form (three files)
//        node node_client.mjs URL FIXTURES_DIR store FIELDS_JSON
// The store form is the text fields of FIELDS_JSON ([[name, value], ...]) in order, then the
// one file `file` (photo.jpg declared image/jpeg) last, as object stores take it; any 2xx passes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, dir, mode, fieldsJSON] = process.argv.slice(2);
const form = new FormData();
if (mode === 'store') {
  for (const [name, value] of JSON.parse(fieldsJSON)) form.append(name, value);
  form.append('file', new Blob([readFileSync(join(dir, 'photo.jpg'))], { type: 'image/jpeg' }), 'photo.jpg');
} else {
  form.append('title', 'Holiday ☀ 2026');
  form.append('token', 'client-supplied');
  for (const [field, name, type] of [
    ['upload', 'photo.jpg', 'image/jpeg'],
    ['notes', 'notes.txt', 'text/plain'],
    ['cv', 'résumé 2026.pdf', 'application/octet-stream'],
  ]) {
    form.append(field, new Blob([readFileSync(join(dir, name))], { type }), name);
  }
}
const response = await fetch(url, { method: 'POST', body: form });
const text = await response.text();
const passed = mode === 'store' ? response.ok : response.status === 200;
if (!passed) {
  console.error(`status ${response.status}: ${text}`);
  process.exit(1);
}
process.stdout.write(text);
