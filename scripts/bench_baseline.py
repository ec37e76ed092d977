"""Against the baseline: this run's ratios beside a previous run's README block.

`scripts/bench.py` reads the baseline block before it rewrites README.md (or the file named by
BENCH_BASELINE, a copy of an earlier block, so several runs compare with the same one), parses
its markdown tables, and sets this run's tables beside them:

- every ratio of the summary tables ("Throughput × the best plain proxy", "Throughput × nginx",
  and the two HTTP/2 ones, × the best plain proxy and × nginx h2 over TLS), with the change, and
  the ones that fell by more than 0.05 named. Only the tables and rows the baseline block has
  are compared: a block from before HAProxy and Caddy were measured has neither their rows nor
  the best-proxy tables, and its nginx ratios are set beside this run's. A best-proxy ratio
  compares with a baseline whose best proxy may have been another (each block's first row of
  that table names it);
- HTTP/2 over TLS, the FormGate candidates in the h2 1 GiB and 4 KiB cases: throughput, the ratio
  to nginx h2 over TLS and the proxy's CPU, baseline against this run.

Each full run appends its tables to .build/bench/baseline-runs.json; runs of the same commit
against the same baseline appear side by side (run 1, run 2, ...).
"""
import json, os, re

SUMMARIES = ["Throughput × the best plain proxy", "Throughput × nginx",
             "HTTP/2 throughput × the best plain proxy (TLS)", "HTTP/2 throughput × nginx h2 (TLS)"]
TLS_CASES = ["h2 1 × 1 GiB", "h2 4 KiB × 64 conns × 10 streams"]
TLS_CANDIDATES = ["FormGate h2 pass-through", "FormGate h2 rules"]
TLS_COLUMNS = ["MB/s", "req/s", "× nginx h2 (TLS)", "proxy CPU s/GiB", "proxy CPU µs/req"]
FALL = 0.05


def number(cell):
    """A table cell's figure (`1.25×`, `1,481`, `0.96`), or None (`—`)."""
    text = cell.strip().replace(",", "").rstrip("×").strip()
    try:
        return float(text)
    except ValueError:
        return None


def tables(text):
    """{title: {row label: {column: figure}}} for every `**title**` followed by a table."""
    found, title, header = {}, None, None
    for line in text.splitlines():
        bold = re.match(r"\*\*(.+?)\*\*", line)
        if bold and not line.startswith("|"):
            title, header = bold.group(1), None
            continue
        if not line.startswith("|") or title is None:
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            found[title] = {}
        elif not set(cells[0]) <= set("-:"):
            found[title][cells[0]] = {column: number(cell) for column, cell in zip(header[1:], cells[1:])}
    return found


def header_commit(text):
    """The commit (and date) a block names in its first line."""
    commit = re.search(r"commit `([^`]+)`", text)
    date = re.search(r"on (\d{4}-\d{2}-\d{2})", text)
    return (commit.group(1) if commit else "unknown"), (date.group(1) if date else "unknown")


def read_baseline(readme_path):
    """The baseline block's text: BENCH_BASELINE's file, else README.md's bench block."""
    path = os.environ.get("BENCH_BASELINE")
    text = open(path or readme_path).read()
    begin, end = "<!-- bench:start -->", "<!-- bench:end -->"
    if begin in text and end in text:
        text = text[text.index(begin) + len(begin):text.index(end)]
    return text


def record(store, commit, baseline_commit, current):
    """Appends this run's tables to the store; returns the runs of `commit` against this baseline."""
    runs = json.load(open(store)) if os.path.exists(store) else []
    runs.append({"commit": commit, "baseline": baseline_commit, "tables": current})
    os.makedirs(os.path.dirname(store), exist_ok=True)
    json.dump(runs, open(store, "w"))
    return [run["tables"] for run in runs if run["commit"] == commit and run["baseline"] == baseline_commit]


def section(baseline_text, current_text, commit, store):
    """The markdown section (a list of lines) and the summary lines to print."""
    base = tables(baseline_text)
    base_commit, base_date = header_commit(baseline_text)
    runs = record(store, commit, base_commit, tables(current_text))
    names = [f"run {i + 1}" for i in range(len(runs))]
    lines = ["## Against the baseline", "",
             f"This commit's runs beside the README block of commit `{base_commit}` ({base_date}), which "
             "`scripts/bench_baseline.py` parsed before the block was rewritten. Change: the last run's ratio "
             f"less the baseline's; a fall of more than {FALL} is marked **fell**. Every change since that commit "
             "moves these figures, and so does the machine's load on either day.", "",
             "| table | candidate | case | baseline | " + " | ".join(names) + " | change |",
             "|---|---|---|---:|" + "---:|" * (len(names) + 1)]
    fell = []
    for title in SUMMARIES:
        for candidate, row in base.get(title, {}).items():
            for case, before in row.items():
                now = [run.get(title, {}).get(candidate, {}).get(case) for run in runs]
                if before is None or now[-1] is None:
                    continue
                change = now[-1] - before
                mark = " **fell**" if change < -FALL else ""
                if mark:
                    fell.append(f"{candidate}, {case}: {before:.2f}× → {now[-1]:.2f}×")
                lines.append(f"| {title} | {candidate} | {case} | {before:.2f}× | " +
                             " | ".join("—" if v is None else f"{v:.2f}×" for v in now) + f" | {change:+.2f}{mark} |")
    lines += ["", "**HTTP/2 over TLS** (FormGate reads TLS records through OpenSSL's `SSL_read` with read-ahead "
              f"since commit 9dcd52d; the baseline `{base_commit}` decrypted TLS 1.3 client records in FormGate's own "
              "reader): the h2 1 GiB and 4 KiB cases.", "",
              "| case | candidate | figure | baseline | " + " | ".join(names) + " | change |",
              "|---|---|---|---:|" + "---:|" * (len(names) + 1)]
    for case in TLS_CASES:
        for candidate in TLS_CANDIDATES:
            row = base.get(case, {}).get(candidate, {})
            for column in TLS_COLUMNS:
                before = row.get(column)
                now = [run.get(case, {}).get(candidate, {}).get(column) for run in runs]
                if before is None or now[-1] is None:
                    continue
                change = (now[-1] - before) / before if before else 0
                lines.append(f"| {case} | {candidate} | {column} | {before:,.2f} | " +
                             " | ".join("—" if v is None else f"{v:,.2f}" for v in now) + f" | {change:+.1%} |")
    summary = [f"bench: against the baseline {base_commit}: " +
               (f"{len(fell)} ratio(s) fell by more than {FALL}: " + "; ".join(fell) if fell
                else f"no ratio fell by more than {FALL}")]
    return lines + [""], summary
