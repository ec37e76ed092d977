// A Node upload server for the conformance matrix: parses each POST with the built-in
// Request.formData() (undici) and answers {"fields": {...}, "files": [...]} (sha256 per file).
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  try {
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method, headers: req.headers, body: req.method === 'GET' ? undefined : body,
    });
    const form = await request.formData();
    const fields = {};
    const files = [];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') {
        fields[name] = value;
      } else {
        const bytes = Buffer.from(await value.arrayBuffer());
        files.push({ field: name, filename: value.name, type: value.type, size: bytes.length,
                     sha256: createHash('sha256').update(bytes).digest('hex') });
      }
    }
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ fields, files }));
  } catch (error) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end(String(error));
  }
});
server.listen(0, '127.0.0.1', () => {
  console.error(`listening on 127.0.0.1:${server.address().port}`);
});
