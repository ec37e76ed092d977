#!/usr/bin/env bash
# Proves the README's "Two commands" on a fresh Debian 12: debootstraps a bookworm chroot into
# .build/fresh-debian/rootfs, bind-mounts only the Swift toolchain (/opt/swift, read-only),
# /proc and /dev into it, copies this checkout's committed HEAD in (git archive: uncommitted
# changes are not checked), runs `make run` there in the background and the README's own
# printf + curl commands against it, and checks the demo upstream's JSON answer (fields, file
# name, size, sha256, FormGate's boundary), stops it, and runs `make release` (the Dockerfile's
# step). With FRESH_TEST_DEPS=1 it then runs `make deps` (the test tools, from Debian only) and
# the conformance matrix on that release binary; with FRESH_MAKE_TEST=1, the whole `make test`
# (`.ci/run`).
#
# Needs root and HTTP access to the Debian mirror this machine's apt uses. Not part of
# `make test`. The chroot shares this machine's network: ports 8080 and 9000 must be free.
# Prints PASS/FAIL lines; exits 1 on any FAIL. The chroot is rebuilt on every run (downloaded
# .debs are cached in .build/fresh-debian/cache); mounts are undone on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$PWD
work=$checkout/.build/fresh-debian
rootfs=$work/rootfs
toolchain=/opt/swift
chroot_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
failures=0
run_pid=""

pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
step() { echo "== $*"; }
# Runs a command in the chroot as root with a plain Debian environment (no /opt/swift on PATH).
in_chroot() {
    chroot "$rootfs" /usr/bin/env -i HOME=/root PATH="$chroot_path" LANG=C.UTF-8 TERM=dumb \
        DEBIAN_FRONTEND=noninteractive /bin/bash -c "$1"
}
# Whether a Debian package is installed in the chroot.
installed_in_chroot() {
    [ "$(chroot "$rootfs" dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
# The packages installed in the chroot, one a line, sorted.
chroot_packages() {
    chroot "$rootfs" dpkg-query -W -f='${Package} ${Status}\n' | awk '$4 == "installed" { print $1 }' | sort
}
# Processes whose root directory is the chroot (all started by this script).
chroot_pids() {
    local link
    for link in /proc/[0-9]*/root; do
        [ "$(readlink "$link" 2>/dev/null)" = "$rootfs" ] && basename "$(dirname "$link")"
    done
    return 0
}
finish() {
    local status=$?
    if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
        kill -TERM -- "-$run_pid" 2>/dev/null || true
        wait "$run_pid" 2>/dev/null || true
    fi
    local pids
    pids=$(chroot_pids)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086 # one pid per word
        kill -KILL $pids 2>/dev/null || true
        sleep 1
    fi
    for mount in "$rootfs/opt/swift" "$rootfs/dev" "$rootfs/proc"; do
        if mountpoint -q "$mount"; then umount "$mount" || umount -l "$mount"; fi
    done
    if grep -q " $rootfs/" /proc/mounts; then
        echo "FAIL: mounts left under $rootfs"
        status=1
    fi
    exit "$status"
}
# Waits up to $2 seconds for the regular expression $1 in the make run log while make runs.
wait_for_log() {
    local deadline=$((SECONDS + $2))
    while [ $SECONDS -lt "$deadline" ]; do
        grep -qsE "$1" "$work/make-run.log" && return 0
        kill -0 "$run_pid" 2>/dev/null || return 1
        sleep 2
    done
    return 1
}

[ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (debootstrap, chroot, mount)"; exit 1; }
[ -x "$toolchain/usr/bin/swift" ] || { echo "FAIL: no Swift toolchain at $toolchain"; exit 1; }
trap finish EXIT
trap 'echo "FAIL: line $LINENO: \"$BASH_COMMAND\" exited with $?"' ERR

step "host: Debian mirror and free ports"
# The mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org.
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '$1 == "URIs:" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
elif [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}
if curl -fsS --max-time 30 -o /dev/null "$mirror/dists/bookworm/Release"; then
    pass "mirror $mirror reachable"
else
    fail "mirror $mirror not reachable"
    exit 1
fi
for port in 8080 9000; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        fail "127.0.0.1:$port is in use on this machine (the chroot shares its network)"
        exit 1
    fi
done
pass "127.0.0.1:8080 and 127.0.0.1:9000 free"

step "host: debootstrap Debian 12 (bookworm, minbase) into $rootfs"
scripts/ensure-packages.sh debootstrap
for mount in "$rootfs/opt/swift" "$rootfs/dev" "$rootfs/proc"; do
    if mountpoint -q "$mount"; then umount "$mount"; fi
done
rm -rf "$rootfs"
mkdir -p "$rootfs" "$work/cache"
if debootstrap --variant=minbase --cache-dir="$work/cache" bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
    pass "debootstrap bookworm ($(cat "$rootfs/etc/debian_version"))"
else
    tail -20 "$work/debootstrap.log"
    fail "debootstrap (log: $work/debootstrap.log)"
    exit 1
fi
# The same Debian archives as this machine (with updates and security), nothing else.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/debian.sources"
    rm -f "$rootfs/etc/apt/sources.list"
else
    printf 'deb %s bookworm bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
        "$mirror" >"$rootfs/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
mkdir -p "$rootfs/opt/swift"
mount -t proc proc "$rootfs/proc"
mount --bind /dev "$rootfs/dev"
mount --bind "$toolchain" "$rootfs/opt/swift"
mount -o remount,bind,ro "$rootfs/opt/swift"
pass "mounted only /proc, /dev and $toolchain (read-only)"

commit=$(git rev-parse --short HEAD)
mkdir -p "$rootfs/root/formgate"
git archive HEAD | tar -x -C "$rootfs/root/formgate"
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "note: uncommitted changes are not part of the check"
pass "checkout $commit copied to /root/formgate (git archive HEAD)"

# Preparatory, not FormGate's: what the Swift toolchain itself needs on Debian 12 (swift.org's
# list for Debian 12, as in its official Docker image), except pkg-config and libpython3-dev
# (which pulls zlib1g-dev): those two are the proxy's to install, so libpython3.11 (LLDB's
# runtime) stands in. Plus make, to type `make run`, and curl, the README's client.
step "chroot: Swift toolchain prerequisites (swift.org), make, curl"
prerequisites="binutils gcc git libc6-dev libcurl4-openssl-dev libedit-dev libicu-dev libncurses-dev libpython3.11
    libsqlite3-dev libstdc++-12-dev libxml2-dev tzdata uuid-dev make curl"
if in_chroot "apt-get update -qq && apt-get install -y -qq --no-install-recommends $(echo $prerequisites)" \
    >"$work/prerequisites.log" 2>&1; then
    pass "prerequisites installed"
else
    tail -20 "$work/prerequisites.log"
    fail "prerequisites (log: $work/prerequisites.log)"
    exit 1
fi
if in_chroot "PATH=/opt/swift/usr/bin:\$PATH swift --version" >"$work/swift-version.log" 2>&1; then
    pass "toolchain runs in the chroot: $(grep -m1 -o 'Swift version [^ ]*' "$work/swift-version.log")"
else
    cat "$work/swift-version.log"
    fail "swift --version in the chroot"
    exit 1
fi
build_packages=$(make -s --no-print-directory -f Makefile -p -n build-deps 2>/dev/null | awk -F' := ' '$1 == "BUILD_PACKAGES" { print $2 }')
test_packages=$(make -s --no-print-directory -f Makefile -p -n build-deps 2>/dev/null | awk -F' := ' '$1 == "TEST_PACKAGES" { print $2 }')
present=""
for package in $build_packages; do installed_in_chroot "$package" && present+=" $package"; done
if [ -z "$present" ]; then
    pass "none of the proxy's packages installed yet ($build_packages)"
else
    fail "already installed before make run:$present"
fi
chroot_packages >"$work/packages-before-run.txt"

step "chroot: make run (in the background)"
setsid chroot "$rootfs" /usr/bin/env -i HOME=/root PATH="$chroot_path" LANG=C.UTF-8 TERM=dumb \
    /bin/bash -c 'cd /root/formgate && exec make run' >"$work/make-run.log" 2>&1 </dev/null &
run_pid=$!
started=$SECONDS
if wait_for_log 'listening on 127\.0\.0\.1:8080' 5400; then
    pass "make run: FormGate listening on 127.0.0.1:8080 after $((SECONDS - started)) s (log: $work/make-run.log)"
else
    tail -30 "$work/make-run.log"
    fail "make run did not start FormGate (log: $work/make-run.log)"
    exit 1
fi
grep -E '^installing: ' "$work/make-run.log" | sed 's/^/  make run: /'
missing=""
for package in $build_packages; do installed_in_chroot "$package" || missing+=" $package"; done
[ -z "$missing" ] && pass "make run installed the proxy's packages" || fail "not installed by make run:$missing"
chroot_packages >"$work/packages-after-run.txt"
added=$(comm -13 "$work/packages-before-run.txt" "$work/packages-after-run.txt" | tr '\n' ' ')
echo "  make run added $(wc -w <<<"$added") packages: $added"
extra=""
for package in $test_packages; do
    case " $build_packages " in *" $package "*) continue ;; esac
    case " $added " in *" $package "*) extra+=" $package" ;; esac
done
[ -z "$extra" ] && pass "make run installed no test tool" || fail "make run installed test packages:$extra"
in_chroot 'python3 -m pip --version' >/dev/null 2>&1 && fail "pip is present in the chroot" || pass "no pip in the chroot"

step "chroot: the README's curl command"
# The commands exactly as the README prints them.
readme_commands=$(grep -E "^(printf 'hello' > /tmp/hello.txt|curl -s -F title=Holiday .*8080/upload)$" README.md || true)
if [ "$(printf '%s\n' "$readme_commands" | grep -c .)" -ne 2 ]; then
    fail "README's printf + curl commands not found"
    exit 1
fi
printf '%s\n' "$readme_commands" | sed 's/^/  $ /'
answer=$work/answer.json
in_chroot "$readme_commands" >"$answer" 2>"$work/curl.log" || true
head -c 2000 "$answer"
echo
expected_sha=$(printf 'hello' | sha256sum | cut -d' ' -f1)
if /usr/bin/python3 - "$answer" "$expected_sha" <<'CHECK'; then
import json, sys
answer = json.load(open(sys.argv[1]))
files = answer["files"]
problems = []
if [f["name"] for f in files] != ["photo"]: problems.append(f"files {files}")
elif files[0]["filename"] != "hello.txt": problems.append(f"filename {files[0]['filename']!r}")
elif files[0]["size"] != 5: problems.append(f"size {files[0]['size']}")
elif files[0]["sha256"] != sys.argv[2]: problems.append(f"sha256 {files[0]['sha256']}")
if [(f["name"], f["value"]) for f in answer["fields"]] != [("title", "Holiday")]:
    problems.append(f"fields {answer['fields']}")
if not answer["boundary"].startswith("----FormGate"): problems.append(f"boundary {answer['boundary']!r}")
for problem in problems:
    print("  unexpected", problem)
sys.exit(1 if problems else 0)
CHECK
    pass "demo upstream received title=Holiday and hello.txt (5 bytes, sha256 $expected_sha) under FormGate's boundary"
else
    cat "$work/curl.log"
    fail "the demo upstream's answer is not the README's"
fi
grep -m1 -E '^\{.*"path":"/upload"' "$work/make-run.log" >/dev/null && pass "FormGate wrote the access-log line" \
    || fail "no access-log line for /upload"

step "chroot: stop make run"
kill -TERM -- "-$run_pid" 2>/dev/null || true
wait "$run_pid" 2>/dev/null || true
run_pid=""
deadline=$((SECONDS + 30))
while [ -n "$(chroot_pids)" ] && [ $SECONDS -lt $deadline ]; do sleep 1; done
[ -z "$(chroot_pids)" ] && pass "FormGate and the demo upstream stopped" || fail "processes left: $(chroot_pids)"

# The Dockerfile's step: the same packages, the Swift runtime linked statically.
step "chroot: make release"
if in_chroot 'cd /root/formgate && make release' >"$work/make-release.log" 2>&1; then
    chroot_packages >"$work/packages-after-release.txt"
    added=$(comm -13 "$work/packages-after-run.txt" "$work/packages-after-release.txt" | wc -l)
    [ "$added" -eq 0 ] && pass "make release: built, no package added" || fail "make release added $added packages"
    if chroot "$rootfs" ldd /root/formgate/.build/release/formgate | grep -q libswiftCore; then
        fail "make release: formgate links the Swift runtime dynamically"
    else
        pass "make release: formgate links no Swift runtime library (static Swift stdlib)"
    fi
else
    tail -20 "$work/make-release.log"
    fail "make release (log: $work/make-release.log)"
fi

if [ "${FRESH_TEST_DEPS:-0}" = 1 ]; then
    step "chroot: make deps (the test tools, from Debian)"
    if in_chroot 'cd /root/formgate && make deps' >"$work/make-deps.log" 2>&1; then
        chroot_packages >"$work/packages-after-deps.txt"
        pass "make deps: $(comm -13 "$work/packages-after-run.txt" "$work/packages-after-deps.txt" | wc -l) packages added"
        grep -E '^installing: ' "$work/make-deps.log" | sed 's/^/  make deps: /'
    else
        tail -20 "$work/make-deps.log"
        fail "make deps (log: $work/make-deps.log)"
    fi
    in_chroot 'python3 -m pip --version' >/dev/null 2>&1 && fail "make deps brought pip" || pass "still no pip"
    versions='echo "  python3 $(/usr/bin/python3 -c "import requests, werkzeug, sys; print(sys.version.split()[0], \"requests\", requests.__version__, \"werkzeug\", werkzeug.__version__)")";
        echo "  node $(node --version) at $(command -v node)"; echo "  $(go version)"; php --version | head -1 | sed "s/^/  /";
        chromium --version | sed "s/^/  /"; curl --version | head -1 | sed "s/^/  /"'
    in_chroot "$versions" 2>&1 || fail "a test tool does not run"
    step "chroot: the conformance matrix (Debian's python3, node, go, php, chromium)"
    if in_chroot 'cd /root/formgate && /usr/bin/python3 Tests/Conformance/matrix.py .build/release/formgate' \
        >"$work/conformance.log" 2>&1; then
        pass "conformance matrix: $(tail -1 "$work/conformance.log")"
    else
        tail -40 "$work/conformance.log"
        fail "conformance matrix (log: $work/conformance.log)"
    fi
fi

if [ "${FRESH_MAKE_TEST:-0}" = 1 ]; then
    step "chroot: CI=true bash .ci/run (make test: the whole suite)"
    started=$SECONDS
    if in_chroot 'cd /root/formgate && CI=true bash .ci/run' >"$work/make-test.log" 2>&1; then
        pass "make test in $((SECONDS - started)) s: $(grep -E '^. Test run with' "$work/make-test.log" | tail -1)"
    else
        grep -E '^. Test run with|✘|FAIL|error:' "$work/make-test.log" | tail -30
        fail "make test (log: $work/make-test.log)"
    fi
fi

if [ "$failures" -eq 0 ]; then
    echo "PASS: fresh Debian 12 check ($commit)"
else
    echo "FAIL: fresh Debian 12 check ($commit): $failures failure(s)"
    exit 1
fi
