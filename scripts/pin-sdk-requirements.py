#!/usr/bin/env python3
"""Writes scripts/sdk-requirements.txt from scripts/sdk-requirements.in: the SDK pins and every
package they depend on, each as `name==version --hash=sha256:...`, for `make sdk-venv` to
install with `pip install --require-hashes --no-deps`.

A temporary venv of Debian's python3 (the Python the SDK venv is made from) resolves the pins
with `pip download` from PyPI; the hash of each file it fetched is written beside its pin. The
files are the ones pip picks for this machine: CPython 3.11 on Debian 12, x86_64, the platform
`make test` runs on. Elsewhere a compiled package's wheel has another hash and the install
fails (never installs something unpinned): add that platform's hashes by hand, or run this
there and merge.

    scripts/pin-sdk-requirements.py          # rewrites scripts/sdk-requirements.txt
"""
import hashlib, os, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.join(here, "sdk-requirements.in")
target = os.path.join(here, "sdk-requirements.txt")
python = os.environ.get("FORMGATE_PYTHON", "/usr/bin/python3")


def canonical(name):
    """PEP 503's normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def name_and_version(filename):
    """A wheel's (`name-version-tags.whl`) or a source archive's (`name-version.tar.gz`)."""
    if filename.endswith(".whl"):
        name, version = filename.split("-")[:2]
    elif filename.endswith(".tar.gz"):
        name, version = filename[: -len(".tar.gz")].rsplit("-", 1)
    else:
        sys.exit(f"pin-sdk-requirements: unexpected file {filename}")
    return canonical(name), version


def main():
    pins = [line.strip() for line in open(source) if line.strip() and not line.startswith("#")]
    with tempfile.TemporaryDirectory() as work:
        venv, files = os.path.join(work, "venv"), os.path.join(work, "files")
        subprocess.run([python, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin/pip"), "download", "--quiet", "--disable-pip-version-check",
                        "--dest", files, *pins], check=True)
        entries = {}
        for filename in sorted(os.listdir(files)):
            name, version = name_and_version(filename)
            with open(os.path.join(files, filename), "rb") as data:
                digest = hashlib.sha256(data.read()).hexdigest()
            entries.setdefault((name, version), []).append(digest)
    names = [name for name, _ in entries]
    if len(set(names)) != len(names):
        sys.exit(f"pin-sdk-requirements: two versions of one package: {sorted(entries)}")
    with open(target, "w") as out:
        out.write("# Written by scripts/pin-sdk-requirements.py from sdk-requirements.in: do not edit.\n"
                  "# Every package of the SDK venv, dependencies included, by version and sha256 of the\n"
                  "# file pip fetched for CPython 3.11 on Debian 12 x86_64 (make sdk-venv installs these\n"
                  "# with --require-hashes --no-deps; nothing else comes from PyPI).\n")
        for (name, version), digests in sorted(entries.items()):
            hashes = "".join(f" \\\n    --hash=sha256:{digest}" for digest in sorted(digests))
            out.write(f"{name}=={version}{hashes}\n")
    print(f"pin-sdk-requirements: {len(entries)} packages pinned in {os.path.relpath(target)}")


main()
