#!/usr/bin/env python3
"""Writes docs/robustness.md from runs of the current code, and refuses anything else.

Inputs (`make robustness` produces them all, see the Makefile):

- .build/robustness/fuzz-report.json: one `make fuzz` run (scripts/fuzz.sh) of every target,
  each until at least ROBUSTNESS_MIN_FUZZ_RUNS executions (default 10,000,000);
- .build/robustness/tests/: the robustness suites (FaultTests, ProtocolTests,
  HostileCorpusTests, DescriptorLimitTests; for HTTP/2, TLS and auth HTTP2HostileTests,
  HTTP2RecorderTests, HTTP2AmplificationTests, TLSRecordLayerTests, TLSTransportTests,
  AuthHostileTests) run by `scripts/provenance.py run tests`, with the figures they wrote to
  .build/test-figures;
- .build/robustness/conformance/: Tests/Conformance/matrix.py, the same way;
- .build/soak-report.json: `make soak`, at least ROBUSTNESS_MIN_SOAK_SECONDS long (default
  1800: the 30-minute soak);
- Tests/Fixtures/hostile/manifest.json, read from the tree (it is part of the code).

Each input records the code it ran on (scripts/provenance.py: the git object hashes of
Package.swift, Package.resolved, Sources, Fuzz, Tests, and the fuzz, soak and provenance
scripts, uncommitted changes included). The report is written only when every input ran on
exactly the code in the tree now, passed, and is complete; otherwise it names what is stale,
failed or missing and exits 1 without touching docs/robustness.md. A commit that changes only
docs, README, conf/, docker/, the Makefile or this script (it only renders) keeps the inputs
valid; one that changes any code path needs new runs. Inputs from
a tree whose code differs from HEAD's (dirty) are refused too, since the report would name a
commit that is not what ran, unless ROBUSTNESS_ALLOW_DIRTY=1 (for trying the pipeline; the
report then says so).

    robustness-report.py              # check every input, write docs/robustness.md
    robustness-report.py --check soak # exit 0 when a valid soak of this code exists (make robustness)
"""
import collections, datetime, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import provenance  # noqa: E402

root = provenance.root
runs = provenance.RUNS
TARGETS = ["FuzzMultipart", "FuzzHeaderValues", "FuzzHTTPHead", "FuzzChunked", "FuzzJWT", "FuzzH2", "FuzzTus", "FuzzStrip", "FuzzRESP",
           "FuzzTraceParent"]
MIN_FUZZ_RUNS = int(os.environ.get("ROBUSTNESS_MIN_FUZZ_RUNS", "10000000"))
MIN_SOAK_SECONDS = int(os.environ.get("ROBUSTNESS_MIN_SOAK_SECONDS", "1800"))
ALLOW_DIRTY = os.environ.get("ROBUSTNESS_ALLOW_DIRTY") == "1"
now = provenance.identity()


def read_json(path):
    full = os.path.join(root, path)
    return json.load(open(full)) if os.path.exists(full) else None


def problems_of(name, record, remedy):
    """Why `record` (an input carrying an identity) cannot be rendered; [] when it can."""
    if record is None:
        return [f"{name}: missing (run {remedy})"]
    out = []
    changed = provenance.differences(record, now)
    if changed:
        out.append(f"{name}: ran on other code ({', '.join(changed)} differ: commit {record['commit'][:12]}"
                   f"{', dirty' if record['dirty'] else ''}; now {now['commit'][:12]}"
                   f"{' with uncommitted changes' if now['dirty'] else ''}); run {remedy}")
    elif record["dirty"] and not ALLOW_DIRTY:
        out.append(f"{name}: ran on uncommitted code (commit it, then run {remedy}; "
                   "ROBUSTNESS_ALLOW_DIRTY=1 to render anyway)")
    if record.get("changed_during_run"):
        out.append(f"{name}: the code changed during the run ({', '.join(record['changed_during_run'])}); run {remedy}")
    return out


def check_fuzz():
    record = read_json(".build/robustness/fuzz-report.json")
    out = problems_of("fuzz", record, "`make fuzz`")
    if record is None:
        return out, None
    targets = {row["target"]: row for row in record["targets"]}
    if sorted(targets) != sorted(TARGETS):
        out.append(f"fuzz: the run has {', '.join(sorted(targets))}, not every target (run `make fuzz`)")
    for row in targets.values():
        if row["executions"] < MIN_FUZZ_RUNS:
            out.append(f"fuzz: {row['target']} ran {row['executions']:,} executions, fewer than "
                       f"{MIN_FUZZ_RUNS:,} (run `make fuzz`)")
        if row["crashes"]:
            out.append(f"fuzz: {row['target']} crashed (the input is in Fuzz/Regressions/{row['target']}/)")
    return out, record


def check_run(name, remedy):
    record = read_json(f".build/robustness/{name}/provenance.json")
    out = problems_of(name, record, remedy)
    if record is not None and record["status"] != 0:
        out.append(f"{name}: `{' '.join(record['command'])}` exited {record['status']} (fix it, then run {remedy})")
    return out, record


def check_soak():
    record = read_json(".build/soak-report.json")
    out = problems_of("soak", record, "`make soak`")
    if record is not None:
        if record["seconds"] < MIN_SOAK_SECONDS:
            out.append(f"soak: {record['seconds']} s long, shorter than {MIN_SOAK_SECONDS} s (run `make soak`)")
        if not record.get("passed"):
            out.append(f"soak: failed ({record['unexpected']} unexpected statuses, or RSS, descriptors or spool "
                       "files grew; see .build/soak-report.json)")
    return out, record


if sys.argv[1:] == ["--check", "soak"]:
    problems, _ = check_soak()
    print("\n".join(problems) if problems else "soak: a valid soak of this code exists, not run again")
    sys.exit(1 if problems else 0)
if sys.argv[1:]:
    sys.exit(__doc__)

if now["dirty"] and not ALLOW_DIRTY:
    sys.exit("robustness report: the code in the tree differs from HEAD; commit it first "
             "(ROBUSTNESS_ALLOW_DIRTY=1 to render anyway)")
problems = []
fuzz_problems, fuzz = check_fuzz()
test_problems, tests = check_run("tests", "`make robustness`")
conformance_problems, conformance_run = check_run("conformance", "`make robustness`")
soak_problems, soak = check_soak()
problems = fuzz_problems + test_problems + conformance_problems + soak_problems
if problems:
    print("robustness report: not written:", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)
    sys.exit(1)

figures_directory = os.path.join(runs, "tests/test-figures")
figures = {name[:-5]: json.load(open(os.path.join(figures_directory, name)))
           for name in (os.listdir(figures_directory) if os.path.isdir(figures_directory) else [])
           if name.endswith(".json")}
conformance = read_json(".build/robustness/conformance/conformance.json")
missing = []

code = ", ".join(f"{path} `{digest[:12]}`" for path, digest in sorted(now["code"].items()))


def command(words):
    """A command for a table cell (GitHub tables split cells at every `|`, even in code)."""
    return "`" + " ".join(words).replace("|", "\\|") + "`"


def duration(seconds):
    minutes = seconds // 60
    return f"{minutes} minute{'' if minutes == 1 else 's'} ({seconds} s)" if minutes else f"{seconds} s"


lowered = [f"{what} {value:,} (standard: {standard:,})" for what, value, standard in
           [("executions per fuzz target", MIN_FUZZ_RUNS, 10_000_000), ("soak seconds", MIN_SOAK_SECONDS, 1800)]
           if value < standard]
lines = ["# Robustness", "",
         f"Regenerated by `make robustness` (`scripts/robustness-report.py`) on "
         f"{datetime.date.today().isoformat()} from runs of commit `{now['commit'][:12]}`"
         f"{' **with uncommitted code changes** (ROBUSTNESS_ALLOW_DIRTY)' if now['dirty'] else ''}. "
         f"Every input below ran on exactly this code ({code}: git object hashes, `scripts/provenance.py`); "
         "the script refuses inputs from other code, failed runs and short ones."
         + (f" **Short runs: minimums lowered to {'; '.join(lowered)}.**" if lowered else ""), "",
         "| input | ran | command |", "|---|---|---|",
         f"| fuzzing | {fuzz['date']} | `make fuzz` |",
         f"| robustness suites | {tests['started']} – {tests['finished']} | {command(tests['command'])} |",
         f"| conformance matrix | {conformance_run['started']} – {conformance_run['finished']} | "
         f"{command(conformance_run['command'])} |",
         f"| soak | {soak.get('finished', soak['date'])} | `make soak`, {duration(soak['seconds'])} |", ""]

manifest = json.load(open(os.path.join(root, "Tests/Fixtures/hostile/manifest.json")))["cases"]
families = collections.OrderedDict()
for case in manifest:
    entry = families.setdefault(case["family"], collections.Counter())
    entry["cases"] += 1
    entry[f'status {case["status"]}'] += 1
    entry[f'upstream {case["upstream"]}'] += 1

lines += ["## Hostile corpus", "",
          "`Tests/Fixtures/hostile/` (made by `scripts/make-hostile-corpus.py`), run through the binary by "
          "`HostileCorpusTests` in every `make test`. *nothing*: the upstream receives no byte; "
          "*incomplete*: refused after the first read, the upstream never receives a complete request; "
          "*sanitized*: the upstream receives exactly the canonical form listed in the manifest.", "",
          "| family | cases | statuses | upstream outcome |", "|---|---:|---|---|"]
total = 0
for family, counts in families.items():
    total += counts["cases"]
    statuses = ", ".join(f"{k.split()[1]}×{v}" for k, v in sorted(counts.items()) if k.startswith("status"))
    upstream = ", ".join(f"{k.split()[1]}×{v}" for k, v in sorted(counts.items()) if k.startswith("upstream"))
    lines.append(f"| {family} | {counts['cases']} | {statuses} | {upstream} |")
hostile = figures.get("hostile-corpus")
ambiguous = f"{hostile['ambiguous_forwards']} ambiguous forwards (measured)" if hostile else "not run"
if hostile is None:
    missing.append("hostile-corpus")
lines += [f"| **total** | **{total}** | | {ambiguous} |", ""]
lines += ["Connection abuse is covered by the tests below (slowloris, pipelining floods, the connection cap, "
          "descriptor exhaustion).", ""]

limit = fuzz["mode"]
how = (f"each target until {limit['runs']:,} executions (libFuzzer `-runs`)" if "runs" in limit
       else f"each target for {limit['seconds']} s")
lines += ["## Fuzzing", "",
          f"One `make fuzz` run ({fuzz['date']}): libFuzzer with ASan and coverage (`scripts/fuzz.sh`), {how}, "
          f"seed {fuzz['seed']} (0: random). `make test` runs 30 s per target with a fixed seed. *seconds*: wall "
          "time; *coverage*: the edges libFuzzer reached.", "",
          "| target | executions | seconds | crashes | coverage |", "|---|---:|---:|---:|---:|"]
for row in fuzz["targets"]:
    lines.append(f"| {row['target']} | {row['executions']:,} | {row['seconds']} | {row['crashes']} | "
                 f"{row['coverage']} |")
lines += ["", "Inputs that ever failed are kept in `Fuzz/Regressions/<target>/` and replayed by every run.", ""]


def figure(name, text):
    data = figures.get(name)
    if data is None:
        missing.append(name)
        return f"{text(None)} (not run)"
    return text(data)


lines += ["## Faults", "",
          "Asserted by `FaultTests`, `ProtocolTests` and `DescriptorLimitTests` (also in every `make test`); the "
          "figures are those of the run above.", "",
          "- Upstream down: 502 within the connect timeout; silent: 504; resetting mid-body: 502 and close; answering "
          "before the body is done: relayed, then a lingering close so the client reads it.",
          "- Upstream half-closing, sending garbage, an oversized (80 KiB) or truncated head, a bad status code or two "
          "Content-Lengths: 502, logged, and the next request is served.",
          "- " + figure("disk-full", lambda d: "Disk full while spooling (`request_body: buffer` on a 256 KiB tmpfs): "
                        + (f"{d['status_507']} of {d['requests']} uploads answered 507, {d['upstream_bytes']} bytes "
                           "reached the upstream, spool empty afterwards" if d else "507, nothing forwarded")) + ".",
          "- " + figure("client-aborts", lambda d: "Client aborts at varying offsets: "
                        + (f"{d['aborts']:,} aborts, {d['logged_499']:,} logged as 499, descriptors "
                           f"{d['descriptors_before']} → {d['descriptors_after']}, spool empty" if d else "")) + ".",
          "- " + figure("faulty-requests", lambda d: "10,000 faulty requests from 8 concurrent clients (aborts on both "
                        "routes, malformed bodies, oversized bodies, a resetting upstream, a full spool disk): "
                        + (f"{d['unexpected']} unexpected statuses; descriptors {d['descriptors_before']} → "
                           f"{d['descriptors_after']}, RSS {d['rss_kib_before']:,} → {d['rss_kib_after']:,} KiB, spool "
                           f"files {d['spool_files_after']}" if d else "")) + ".",
          "- " + figure("slowloris", lambda d: "Slowloris: 100 partial heads and 100 stalled bodies "
                        + (f"({d['answered_408']} of {d['connections']} answered 408 at the timeout); a good client "
                           f"meanwhile was answered in {d['good_client_ms']} ms" if d else "")) + ".",
          "- " + figure("pipelining-flood", lambda d: "Pipelining flood on one connection: "
                        + (f"{d['in_order']:,} of {d['requests']:,} requests answered in order, peak RSS "
                           f"{d['peak_rss_kib']:,} KiB" if d else "")) + ".",
          "- " + figure("descriptor-exhaustion", lambda d: "Out of descriptors (`prlimit --nofile=256:256`, the "
                        "connection cap clamped to 64 and logged, then the running limit lowered below it): "
                        + (f"{d['idle_clients']} idle clients against a limit of {d['descriptor_limit']}; "
                           f"{d['cpu_seconds']} CPU seconds over {d['window_seconds']} s, {d['stderr_lines']} stderr "
                           f"lines, {d['accept_errors']} failed accepts counted in "
                           "`formgate_accept_errors_total{reason=\"descriptors\"}`, an upload served byte-exact once "
                           "they left" if d else "")) + ".",
          "- " + figure("tus-resume", lambda d: "Resumable upload (tus) of 256 MiB cut mid-PATCH and resumed from "
                        "HEAD's offset, byte-exact upstream: "
                        + (f"the client's socket closed after {d['client_cut_at']:,} body bytes, HEAD then "
                           f"{d['client_cut_head_offset']:,} (peak RSS {d['client_cut_peak_rss_kib']:,} KiB); FormGate "
                           f"killed (`kill -9`) with {d['kill_sent_in_flight']:,} bytes of a PATCH in flight, "
                           f"{d['kill_acknowledged_offset']:,} acknowledged, HEAD after the restart "
                           f"{d['kill_head_offset_after_restart']:,} (peak RSS {d['kill_peak_rss_kib_before_kill']:,} "
                           f"KiB before, {d['kill_peak_rss_kib_after_restart']:,} KiB after)"
                           if d and "kill_head_offset_after_restart" in d and "client_cut_at" in d else "")) + ".",
          "- " + figure("scan-256mib", lambda d: "A clean 256 MiB file scanned by clamd while it streams, "
                        "byte-exact upstream: "
                        + (f"peak RSS {d['peak_rss_kib_before']:,} KiB before, {d['peak_rss_kib_after']:,} KiB after"
                           if d else "")) + "; a stopped, missing, hung or garbage-speaking scanner, clamd's own "
          "size heuristic and `max_bytes`: 503/413 (or delivered and logged `error`/`skipped` when allowed), never "
          "`clean`, no whole request upstream (`ScanFailureTests`, `ScanLoadTests`); stripped images judged by "
          "exiftool, Pillow and dwebp (`StripTests`).",
          "- Half-closing clients get their answer; a FIN before the body is whole is a 499 and the upstream never "
          "sees a closing delimiter. A slow (1 MiB/s) upstream: bounded RSS. Connection cap: clients past it wait, "
          "established ones are served. SIGTERM during a 256 MiB upload: it completes, exit 0.", ""]

lines += ["## HTTP/2, TLS and auth", "",
          "Passed in the run above (and in every `make test`), each judged by what a raw recording upstream "
          "received:", "",
          "- `HTTP2HostileTests`: every case of `Tests/ProxyIntegrationTests/Resources/h2_hostile.py` (malformed "
          "heads, floods of every frame kind, HPACK amplification, stream-id exhaustion, PRIORITY floods and "
          "self-dependency, rapid reset, h2c Upgrade on a rules route) meets the verdict pinned in "
          "`h2_hostile_expected.json`; the upstream gets nothing, an aborted partial, or exactly the re-framed "
          "request, as pinned; floods are cut within twice their budget and 1 CPU second.",
          "- `HTTP2RecorderTests`, `HTTP2AmplificationTests`: silent streams time out, bodies that disagree with "
          "their length never reach the upstream whole, a header block that never ends closes the connection, "
          "output the client does not read stops its reading.",
          "- `TLSRecordLayerTests`, `TLSTransportTests`: OpenSSL's record layer: records cut anywhere, KeyUpdates, a "
          "tampered record (bad_record_mac), renegotiation refused, a record cut short does not hold its worker.",
          "- `AuthHostileTests`: the hostile auth corpus (`Tests/Fixtures/hostile-auth`).", ""]

lines += ["## Shared state (Redis)", "",
          "Passed in the run above (and in every `make test`), against Debian's redis-server started by the tests "
          "and a stand-in that lies:", "",
          "- `SharedRateLimitTests`: two FormGate processes hold one rate, one burst, one byte budget and one "
          "`concurrent` between them; Redis stopped mid-run: `local` serves from each process's buckets (metric and "
          "log say so), `deny` answers 503, `allow` passes; Redis back: shared again; Redis frozen (SIGSTOP: the "
          "kernel accepts, nothing answers): every request is answered after the 50 ms command timeout.",
          "- `SharedRateLimitHostileTests`: a Redis that answers garbage, closes mid-reply, answers with another "
          "request's nonce, answers two decisions swapped, or errors: each decision fails as `on_error` says (503 "
          "under `deny`), nothing crashes, a route without a shared limit is untouched.",
          "- `SharedRateLimitKeyTests`: JWT subjects made of key syntax (`:`, `*`, braces, line breaks, 81 bytes) "
          "each count against their own key only.",
          "- `TusS3Tests`: two replicas on one bucket (moto's S3 server) and one redis-server: a 256 MiB upload "
          "begun on one, that replica killed (`kill -9`) mid-PATCH, continued on the other from HEAD's offset, "
          "delivered byte-exact once; two PATCHes of one upload at once: one 204, the other 423, never "
          "interleaved; expiry leaves no object and no multipart upload in the bucket.", ""]

lines += ["## Slow bodies, the admin listener and tracing", "",
          "Passed in the run above (and in every `make test`):", "",
          "- `BodyTotalTests`: a body trickling one byte every 100 ms (never silent long enough for `idle`) under "
          "`timeouts.body_total: 2s` gets 408 after 2 s over HTTP/1.1, an h2 stream and a tus PATCH (which keeps "
          "what arrived); the upstream's request is cut short and its connection closed; log and metric say why.",
          "- `LiveViewTests`: every admin path answers 401 without the admin token or with a wrong one; no admin "
          "answer (the page, the snapshot, the event stream, metrics, the refusals) holds the admin token, a "
          "client's bearer token or its cookie; an event stream reader that stops reading is dropped once 8 KiB "
          "(a test's limit; 1 MiB by default) wait for it, and its connection ends; `formgate check` and `run` "
          "refuse an admin listener off loopback without a token.",
          "- `ProxyTracingTests`: an OTLP receiver that is down costs spans only (each counted dropped), never a "
          "request; `sample: 0` exports nothing and forwards the client's `traceparent` untouched.", ""]

cells = {(c["client"], c["server"]): c for c in conformance["cells"]}
passed = sum(1 for c in conformance["cells"] if c["ok"])
lines += ["## Conformance matrix", "",
          f"`Tests/Conformance/matrix.py` (also in `make test`): {passed} of {len(cells)} cells pass. Every route "
          "renames `upload` to `file`, drops `token`, injects `via`, sniffs types (override) and renames files "
          "`{field}-{basename}{ext}`; each cell checks the server saw exactly the expected fields and byte-exact "
          "files (sha256) with the sniffed types and new names.", "",
          "| client \\ server | " + " | ".join(conformance["servers"]) + " |",
          "|---|" + "---|" * len(conformance["servers"])]
for client in conformance["clients"]:
    lines.append(f"| {client} | " + " | ".join(
        "ok" if cells[(client, server)]["ok"] else "**fail**" for server in conformance["servers"]) + " |")
lines.append("")
if conformance.get("store_cells"):
    stored = {(c["client"], c["provider"]): c for c in conformance["store_cells"]}
    lines += [f"Object stores: {sum(1 for c in stored.values() if c['ok'])} of {len(stored)} cells pass. Each "
              "route injects its provider's credential before the file (`request_body: buffer`, key "
              "`conformance/{uuid}{ext}`, sniffing on override); the client sends only a forged credential "
              "and one file; each cell checks what the store received (FormGate's credential once, the forged "
              "one dropped, the file last, a Content-Length) and that it holds the object under the logged "
              "`object_key`, byte-exact, with the sniffed type.", "",
              "| client \\ provider | " + " | ".join(conformance["providers"]) + " |",
              "|---|" + "---|" * len(conformance["providers"])]
    for client in conformance["store_clients"]:
        lines.append(f"| {client} | " + " | ".join(
            "ok" if stored[(client, provider)]["ok"] else "**fail**" for provider in conformance["providers"]) + " |")
    lines.append("")

kinds = ", ".join(f"{kind} {entry['requests']:,}" for kind, entry in soak["by_kind"].items())
lines += ["## Soak", "",
          f"`make soak` (`scripts/soak.py`): {duration(soak['seconds'])}, "
          f"{soak['threads']} client threads in a second process on loopback, release build, 2 workers.", "",
          f"- Requests: {soak['requests']:,} ({kinds}).",
          f"- Unexpected statuses: {soak['unexpected']}.",
          f"- RSS: {soak['rss_kib']['start']:,} KiB at start, peak {soak['rss_kib']['early_max']:,} KiB in the "
          f"first tenth after warm-up, {soak['rss_kib']['late_max']:,} KiB in the last tenth "
          f"(max {soak['rss_kib']['max']:,} KiB).",
          f"- Descriptors: {soak['fds']['start']} at start, at most {soak['fds']['early_max']} early, "
          f"{soak['fds']['end']} at the end; spool files at the end: {soak['spool_files_end']}.", ""]

if missing:
    print("robustness report: not written, the robustness suites wrote no figures for "
          + ", ".join(missing) + " (did every suite run?)", file=sys.stderr)
    sys.exit(1)
open(os.path.join(root, "docs/robustness.md"), "w").write("\n".join(lines))
print(f"wrote docs/robustness.md from runs of {now['commit'][:12]}{' (dirty tree)' if now['dirty'] else ''}")
