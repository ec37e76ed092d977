#!/usr/bin/env python3
"""Which code a measurement ran on, for docs/robustness.md (scripts/robustness-report.py).

A run's *code* is the content of CODE_PATHS in the working tree, staged or not, untracked
files included (ignored ones not): the git object hash of each path (a tree for a
directory), computed through a temporary index so nothing is staged. Two runs ran on the
same code when every hash agrees. CODE_PATHS are what is built, tested or drives a
measurement: the package, Sources, Fuzz (harnesses, seeds, regressions), Tests (suites,
fixtures, the conformance matrix) and the scripts that run fuzzing and the soak. Docs, README,
conf/, docker/, the Makefile, the other scripts and robustness-report.py (it only renders)
are not: a commit that regenerates docs/robustness.md, edits the README or rewords the report
keeps the runs valid. `dirty` says the code differs from HEAD's (then the commit alone does
not name what ran).

    provenance.py identity                     # prints the identity as JSON
    provenance.py run NAME [--collect PATH]... -- COMMAND...

`run` records the identity, runs COMMAND, and writes .build/robustness/NAME/provenance.json
(identity, command, exit status, start and end); each --collect PATH (a file or a directory
the command writes) is emptied before and copied into .build/robustness/NAME/ after, so a
later `make test` cannot change what the report reads. It exits with COMMAND's status.
"""
import datetime, json, os, shutil, subprocess, sys, tempfile

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CODE_PATHS = ["Package.swift", "Package.resolved", "Sources", "Fuzz", "Tests",
              "scripts/fuzz.sh", "scripts/soak.py", "scripts/provenance.py"]
RUNS = os.path.join(root, ".build/robustness")


def git(*arguments, env=None):
    return subprocess.run(["git", "-C", root, *arguments], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def trees(treeish):
    """{path: object hash} for CODE_PATHS in `treeish` (absent paths are left out)."""
    listing = git("ls-tree", treeish, "--", *CODE_PATHS)
    return {line.split("\t", 1)[1]: line.split()[2] for line in listing.splitlines()}


def identity():
    """The code in the working tree now: commit, per-path hashes, and whether it differs from HEAD."""
    commit = git("rev-parse", "HEAD")
    with tempfile.TemporaryDirectory() as scratch:
        index = os.path.join(scratch, "index")
        # Start from the real index so unchanged files are not hashed again.
        shutil.copy(git("rev-parse", "--path-format=absolute", "--git-path", "index"), index)
        env = dict(os.environ, GIT_INDEX_FILE=index)
        present = [path for path in CODE_PATHS if os.path.exists(os.path.join(root, path))]
        git("add", "--all", "--", *present, env=env)
        tree = git("write-tree", env=env)
    code = trees(tree)
    return {"commit": commit, "dirty": code != trees(commit), "code": code}


def differences(ran, now):
    """The CODE_PATHS whose content differs between two identities."""
    return sorted(path for path in set(ran["code"]) | set(now["code"])
                  if ran["code"].get(path) != now["code"].get(path))


def run(name, collect, command):
    out = os.path.join(RUNS, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for path in collect:
        full = os.path.join(root, path)
        if os.path.isdir(full):
            shutil.rmtree(full)
        elif os.path.exists(full):
            os.remove(full)
    before = identity()
    started = datetime.datetime.now(datetime.timezone.utc)
    status = subprocess.run(command, cwd=root).returncode
    finished = datetime.datetime.now(datetime.timezone.utc)
    after = identity()
    for path in collect:
        full = os.path.join(root, path)
        if os.path.isdir(full):
            shutil.copytree(full, os.path.join(out, os.path.basename(path)))
        elif os.path.exists(full):
            shutil.copy(full, out)
    record = dict(before, name=name, command=command, status=status,
                  started=started.isoformat(timespec="seconds"), finished=finished.isoformat(timespec="seconds"),
                  changed_during_run=differences(before, after))
    json.dump(record, open(os.path.join(out, "provenance.json"), "w"), indent=1)
    print(f"provenance: {name} exited {status} on {before['commit'][:12]}"
          f"{' (dirty tree)' if before['dirty'] else ''} -> {os.path.relpath(out, root)}")
    return status


def main(arguments):
    if arguments[:1] == ["identity"]:
        print(json.dumps(identity(), indent=1))
        return 0
    if arguments[:1] == ["run"] and "--" in arguments and len(arguments) > 3:
        name, options = arguments[1], arguments[2:arguments.index("--")]
        command = arguments[arguments.index("--") + 1:]
        if len(options) % 2 or any(option != "--collect" for option in options[::2]) or not command:
            sys.exit(__doc__)
        return run(name, options[1::2], command)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
