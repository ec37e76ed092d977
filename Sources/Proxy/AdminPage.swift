/// The admin listener's live upload view, served at `GET /`: one self-contained HTML document
/// (style and script inline, no external asset) that works under the admin's
/// Content-Security-Policy (`default-src 'none'; script-src 'unsafe-inline'; style-src
/// 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'`).
///
/// The page takes the admin token from `?access_token=` once (RFC 6750 §2.3), keeps it in
/// `sessionStorage`, removes it from the address bar, and reads `GET /uploads/events` with
/// `fetch` and `Authorization: Bearer` as a stream, parsing the Server-Sent Events itself
/// (`EventSource` cannot send a header). Every string from the server is inserted as text.
/// The test hooks it keeps stable are listed in the comment at the top of the document.
enum AdminPage {
    /// The document (UTF-8). A raw literal with no interpolation: the text is the page byte for
    /// byte, which `Tests/ProxyIntegrationTests/Resources/admin_page_fake.py` extracts.
    static let html: String = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>FormGate · uploads</title>
        <link rel="icon" href="data:,">
        <!--
        FormGate live upload view. Stable test hooks:
          <table id="in-flight">, its rows
            <tr class="upload" data-id="ID" data-stage="STAGE" data-bytes="BYTES_IN">
          <table id="finished">, its rows <tr class="finished" data-id="ID" data-status="STATUS">
          document.body.dataset.stream: connecting | open | closed | unauthorized
          window.formgateUpdates: the number of events applied (snapshot, upload, finished)
        The token comes from ?access_token= once, is kept in sessionStorage, and is sent as
        "Authorization: Bearer" on GET /uploads/events (read with fetch, parsed as Server-Sent
        Events here). Server strings (filenames, identities) are inserted with textContent only.
        A snapshot's finished list is shown newest first: sorted by finished_at when every entry
        has one, else kept in the server's order (which should then be newest first).
        -->
        <style>
        :root { --fg: #1d2430; --muted: #667085; --line: #e4e7ec; --bg: #fff; --head: #f5f7fa;
          --ok: #067647; --warn: #b54708; --bad: #b42318; --info: #175cd3; --wait: #6941c6; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #e6e9ef; --muted: #98a2b3; --line: #2b3340; --bg: #12161c; --head: #1a2029;
            --ok: #47cd89; --warn: #fdb022; --bad: #f97066; --info: #84adff; --wait: #bdb4fe; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
          color: var(--fg); background: var(--bg); }
        header { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; align-items: center;
          gap: .4rem 1rem; padding: .6rem 1rem; background: var(--head);
          border-bottom: 1px solid var(--line); }
        h1 { display: flex; align-items: center; gap: .4rem; margin: 0; font-size: 1.1rem; }
        h1 svg { color: var(--info); }
        #state::before { content: ""; display: inline-block; width: .6rem; height: .6rem;
          margin-right: .35rem; border-radius: 50%; background: var(--muted); }
        [data-stream=open] #state::before { background: var(--ok); }
        [data-stream=closed] #state::before,
        [data-stream=unauthorized] #state::before { background: var(--bad); }
        [data-stream=unauthorized] #state { color: var(--bad); font-weight: 600; }
        #counts { margin-left: auto; color: var(--muted); }
        main { padding: 0 1rem 1rem; }
        h2 { margin: 1.2rem 0 .4rem; font-size: 1rem; }
        .scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
        table { width: 100%; border-collapse: collapse; }
        th, td { padding: .35rem .6rem; text-align: left; white-space: nowrap; vertical-align: middle;
          border-bottom: 1px solid var(--line); }
        th { background: var(--head); color: var(--muted); font-size: .75rem; font-weight: 600;
          text-transform: uppercase; letter-spacing: .03em; }
        tbody tr:last-child td { border-bottom: 0; }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        .wrap { min-width: 8rem; max-width: 22rem; white-space: normal; overflow-wrap: anywhere; }
        .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
        .muted, .empty { color: var(--muted); }
        .stale #in-flight tbody { opacity: .5; }
        .badge { display: inline-block; padding: 0 .5rem; border: 1px solid currentColor;
          border-radius: 999px; font-size: .8rem; }
        .stage-receiving { color: var(--info); }
        .stage-held { color: #7a2e0e; background: #fef0c7; border-color: #f79009; font-weight: 600; }
        .stage-delivering { color: var(--ok); }
        .stage-waiting { color: var(--wait); }
        .stage-other { color: var(--muted); }
        .status { font-weight: 600; }
        .status-2 { color: var(--ok); }
        .status-3 { color: var(--muted); }
        .status-4 { color: var(--warn); }
        .status-5, .error { color: var(--bad); }
        progress { width: 8rem; height: .8rem; accent-color: var(--info); vertical-align: middle; }
        @media (max-width: 40rem) {
          header { padding: .5rem; }
          main { padding: 0 .5rem .5rem; }
          th, td { padding: .3rem .4rem; }
          #counts { margin-left: 0; }
          #in-flight thead { display: none; }
          #in-flight tr { display: block; padding: .3rem 0; border-bottom: 1px solid var(--line); }
          #in-flight td { display: flex; justify-content: space-between; gap: 1rem; min-width: 0;
            max-width: none; padding: .15rem .5rem; border: 0; text-align: right; white-space: normal;
            overflow-wrap: anywhere; }
          #in-flight td::before { content: attr(data-label); color: var(--muted); font-size: .75rem;
            text-transform: uppercase; text-align: left; white-space: nowrap; }
        }
        </style>
        </head>
        <body data-stream="connecting">
        <header>
          <h1><svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor"
            d="M12 2 4 10h5v7h6v-7h5zM4 19h16v3H4z"/></svg>FormGate</h1>
          <span id="state" role="status">connecting…</span>
          <span id="counts"></span>
        </header>
        <main>
          <h2>In flight</h2>
          <div class="scroll"><table id="in-flight">
            <thead><tr><th>ID</th><th>Route</th><th>Protocol</th><th>Client</th><th>Identity</th><th>Part</th>
              <th>Stage</th><th class="num">Bytes</th><th>Progress</th><th class="num">Rate</th>
              <th class="num">Elapsed</th></tr></thead>
            <tbody></tbody>
          </table></div>
          <p id="in-flight-empty" class="empty">No upload in flight.</p>
          <h2>Recently finished</h2>
          <div class="scroll"><table id="finished">
            <thead><tr><th>ID</th><th>Route</th><th>Status</th><th class="num">Duration</th>
              <th class="num">Bytes</th><th>Error</th></tr></thead>
            <tbody></tbody>
          </table></div>
          <p id="finished-empty" class="empty">Nothing finished yet.</p>
        </main>
        <script>
        'use strict';
        (() => {
          const TOKEN_KEY = 'formgate-admin-token';
          const RETRY_MS = 2000;
          const KEEP_FINISHED = 100;
          const MAX_LINE = 16 << 20;
          const byId = (id) => document.getElementById(id);
          const inFlightBody = byId('in-flight').tBodies[0];
          const finishedBody = byId('finished').tBodies[0];
          /** In-flight uploads by id: {row, started (ms since the epoch), elapsed (its cell)}. */
          const inFlight = new Map();
          /** Finished uploads, newest first. */
          let finished = [];
          /** Server clock minus ours, when the stream's Date header says they differ by over 2 s. */
          let clockOffset = 0;
          window.formgateUpdates = 0;

          /** The token from ?access_token= (then kept in sessionStorage and removed from the URL). */
          function takeToken() {
            let token = null;
            try { token = sessionStorage.getItem(TOKEN_KEY); } catch (e) { /* storage disabled */ }
            const params = new URLSearchParams(location.search);
            if (params.has('access_token')) {
              token = params.get('access_token');
              try { sessionStorage.setItem(TOKEN_KEY, token); } catch (e) { /* kept in memory only */ }
              params.delete('access_token');
              const query = params.toString();
              const clean = location.pathname + (query ? '?' + query : '') + location.hash;
              history.replaceState(history.state, '', clean);
            }
            return token;
          }
          const token = takeToken();

          const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
          function bytes(n) {
            if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
            let unit = 0;
            while (Math.abs(n) >= 1024 && unit < UNITS.length - 1) { n /= 1024; unit += 1; }
            return (unit === 0 ? String(n) : n.toFixed(n < 100 ? 1 : 0)) + ' ' + UNITS[unit];
          }
          function duration(ms, wholeSeconds) {
            if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '—';
            if (ms < 1000 && !wholeSeconds) return Math.round(ms) + ' ms';
            const seconds = ms / 1000;
            if (seconds < 60) return (wholeSeconds ? Math.floor(seconds) : seconds.toFixed(1)) + ' s';
            const whole = Math.floor(seconds);
            const two = (v) => String(v).padStart(2, '0');
            const hours = Math.floor(whole / 3600), minutes = Math.floor(whole / 60) % 60;
            return hours ? hours + ' h ' + two(minutes) + ' m' : minutes + ' m ' + two(whole % 60) + ' s';
          }
          const text = (value) => (value === null || value === undefined || value === '' ? '—'
            : String(value));
          /** The column names, shown beside each value when a narrow window stacks a row. */
          const LABELS = new Map([['upload', byId('in-flight')], ['finished', byId('finished')]].map(
            ([kind, table]) => [kind, [...table.tHead.rows[0].cells].map((th) => th.textContent)]));
          function cell(row, content, className) {
            const td = row.insertCell();
            td.textContent = content;
            td.dataset.label = LABELS.get(row.className)[td.cellIndex] || '';
            if (className) td.className = className;
            return td;
          }
          function span(content, className) {
            const element = document.createElement('span');
            element.textContent = content;
            if (className) element.className = className;
            return element;
          }
          const STAGE_CLASSES = new Map([['receiving', 'stage-receiving'], ['delivering', 'stage-delivering'],
            ['waiting_upstream', 'stage-waiting']]);
          function stageClass(stage) {
            if (typeof stage === 'string' && stage.startsWith('held:')) return 'stage-held';
            return STAGE_CLASSES.get(stage) || 'stage-other';
          }
          function statusClass(status) {
            const type = Math.floor(status / 100);
            return Number.isInteger(status) && type >= 1 && type <= 5 ? 'status-' + type : '';
          }

          function fillUpload(entry, upload) {
            const row = entry.row;
            row.className = 'upload';
            row.dataset.id = String(upload.id);
            row.dataset.stage = String(upload.stage);
            row.dataset.bytes = String(upload.bytes_in);
            row.replaceChildren();
            cell(row, text(upload.id), 'mono');
            cell(row, text(upload.route));
            cell(row, text(upload.protocol));
            cell(row, text(upload.client), 'mono');
            cell(row, text(upload.identity), upload.identity == null ? 'muted' : 'wrap');
            const part = cell(row, upload.part ? '' : '—', upload.part ? 'wrap' : 'muted');
            if (upload.part) {
              const both = span(text(upload.part.filename));
              both.append(' ', span('(' + text(upload.part.name) + ')', 'muted'));
              part.append(both);
            }
            cell(row, '').append(span(text(upload.stage), 'badge ' + stageClass(upload.stage)));
            const tus = upload.tus && typeof upload.tus === 'object' ? upload.tus : null;
            const done = tus ? tus.offset : upload.bytes_in;
            const total = tus ? tus.length : upload.bytes_expected;
            const known = typeof total === 'number' && total >= 0 && typeof done === 'number';
            cell(row, (tus ? 'tus ' : '') + bytes(done) + ' / ' + (known ? bytes(total) : '?'), 'num');
            const bar = document.createElement('progress');
            if (known) {
              bar.max = Math.max(total, 1);
              bar.value = total === 0 ? 1 : Math.min(done, total);
              bar.title = (total === 0 ? 100 : Math.floor(100 * Math.min(done, total) / total)) + ' %';
            }
            cell(row, '').append(bar);
            cell(row, bytes(upload.bytes_per_second) + '/s', 'num');
            entry.started = Date.parse(upload.started);
            entry.elapsed = cell(row, '', 'num');
            showElapsed(entry);
          }
          function showElapsed(entry) {
            entry.elapsed.textContent = duration(Date.now() + clockOffset - entry.started, true);
          }

          function finishedRow(item) {
            const row = document.createElement('tr');
            row.className = 'finished';
            row.dataset.id = String(item.id);
            row.dataset.status = String(item.status);
            if (typeof item.finished_at === 'string') row.title = 'finished ' + item.finished_at;
            cell(row, text(item.id), 'mono');
            cell(row, text(item.route));
            cell(row, text(item.status), 'status ' + statusClass(item.status));
            cell(row, duration(item.duration_ms, false), 'num');
            cell(row, bytes(item.bytes_in), 'num');
            cell(row, text(item.error), item.error == null ? 'muted' : 'wrap error');
            return row;
          }

          function applyUpload(upload) {
            const key = String(upload.id);
            if (finished.some((item) => String(item.id) === key)) return;  // a late update of a finished one
            let entry = inFlight.get(key);
            if (!entry) {
              entry = {row: inFlightBody.insertRow()};
              inFlight.set(key, entry);
            }
            fillUpload(entry, upload);
          }
          function applyFinished(item) {
            const key = String(item.id);
            const entry = inFlight.get(key);
            if (entry) {
              entry.row.remove();
              inFlight.delete(key);
            }
            const others = finished.filter((old) => String(old.id) !== key);
            finished = [item].concat(others).slice(0, KEEP_FINISHED);
            finishedBody.replaceChildren(...finished.map(finishedRow));
          }
          function applyGone(item) {
            // Left the board without a finished record (the server's ring overran).
            const key = String(item.id);
            const entry = inFlight.get(key);
            if (entry) {
              entry.row.remove();
              inFlight.delete(key);
            }
          }
          function applySnapshot(snapshot) {
            let list = Array.isArray(snapshot.finished) ? snapshot.finished.slice() : [];
            if (list.every((item) => typeof item.finished_at === 'string')) {
              list.sort((a, b) => Date.parse(b.finished_at) - Date.parse(a.finished_at));
            }
            finished = list.slice(0, KEEP_FINISHED);
            finishedBody.replaceChildren(...finished.map(finishedRow));
            inFlight.clear();
            inFlightBody.replaceChildren();
            const uploads = Array.isArray(snapshot.in_flight) ? snapshot.in_flight : [];
            for (const upload of uploads) applyUpload(upload);
          }
          const HANDLERS = new Map([
            ['snapshot', applySnapshot], ['upload', applyUpload], ['finished', applyFinished],
            ['gone', applyGone]]);

          function showCounts() {
            byId('counts').textContent = inFlight.size + ' in flight · ' + finished.length + ' finished';
            byId('in-flight-empty').hidden = inFlight.size > 0;
            byId('finished-empty').hidden = finished.length > 0;
          }
          function dispatch(type, data) {
            const handler = HANDLERS.get(type);
            if (!handler) return;
            try {
              const value = JSON.parse(data);
              if (!value || typeof value !== 'object') throw new Error('not an object');
              handler(value);
            } catch (error) {
              console.error('formgate: cannot apply a ' + type + ' event: ' + error);
              return;
            }
            window.formgateUpdates += 1;
            showCounts();
          }

          /**
           * A Server-Sent Events parser (WHATWG HTML §9.2.6): fed decoded text in chunks that may
           * split lines anywhere (even between CR and LF); calls onEvent(type, data) per event.
           */
          function eventStreamParser(onEvent) {
            const EOL = /[\r\n]/g;
            let buffer = '', skipLF = false, type = '', data = [];
            function line(content) {
              if (content === '') {
                if (data.length > 0) onEvent(type || 'message', data.join('\n'));
                type = '';
                data = [];
                return;
              }
              if (content.startsWith(':')) return;  // a comment: ": keep-alive"
              const colon = content.indexOf(':');
              const field = colon < 0 ? content : content.slice(0, colon);
              let value = colon < 0 ? '' : content.slice(colon + 1);
              if (value.startsWith(' ')) value = value.slice(1);
              if (field === 'event') type = value;
              else if (field === 'data') data.push(value);
              // id and retry are unused: a reconnection starts again from a snapshot.
            }
            return (chunk) => {
              if (chunk === '') return;
              const content = buffer + chunk;
              let start = 0;
              if (skipLF) {
                skipLF = false;
                if (content[0] === '\n') start = 1;
              }
              EOL.lastIndex = Math.max(start, buffer.length);  // the buffer holds no line end
              for (let match = EOL.exec(content); match !== null; match = EOL.exec(content)) {
                line(content.slice(start, match.index));
                start = match.index + 1;
                if (match[0] === '\r') {
                  if (start === content.length) skipLF = true;
                  else if (content[start] === '\n') start += 1;
                }
                EOL.lastIndex = start;
              }
              buffer = content.slice(start);
              if (buffer.length > MAX_LINE) throw new Error('a line longer than ' + MAX_LINE + ' characters');
            };
          }

          function setStream(state, message) {
            document.body.dataset.stream = state;
            document.body.classList.toggle('stale', state !== 'open');
            byId('state').textContent = message;
          }
          function noteServerClock(date) {
            const offset = date ? Date.parse(date) - Date.now() : NaN;
            clockOffset = Number.isFinite(offset) && Math.abs(offset) > 2000 ? offset : 0;
          }
          async function connect() {
            setStream('connecting', 'connecting…');
            try {
              const headers = token ? {Authorization: 'Bearer ' + token} : {};
              const response = await fetch('/uploads/events', {headers, cache: 'no-store'});
              if (response.status === 401) {
                setStream('unauthorized', 'unauthorized: open /?access_token=…');
                return;
              }
              if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
              noteServerClock(response.headers.get('Date'));
              setStream('open', 'live');
              const reader = response.body.getReader();
              const decoder = new TextDecoder();
              const push = eventStreamParser(dispatch);
              for (;;) {
                const {value, done} = await reader.read();
                if (done) break;
                push(decoder.decode(value, {stream: true}));
              }
            } catch (error) {
              console.warn('formgate: the event stream failed: ' + error);
            }
            setStream('closed', 'disconnected, retrying');
            setTimeout(connect, RETRY_MS);
          }

          setInterval(() => { for (const entry of inFlight.values()) showElapsed(entry); }, 1000);
          showCounts();
          connect();
        })();
        </script>
        </body>
        </html>
        """#
}
