# FormGate — `make test` runs every check CI runs; `make bench` measures; `make run` serves.
SHELL := /bin/bash
# The Swift toolchain is assumed at /opt/swift. Debian's /usr/bin comes before the rest of PATH,
# so the tests run Debian's python3, node, go and php, not a pyenv or nvm one found first.
export PATH := /opt/swift/usr/bin:/usr/bin:/bin:$(PATH)

# Debian packages building and running the proxy needs: Package.swift's system libraries
# (libevent with its OpenSSL part, OpenSSL, libmagic, zlib, libyaml, nghttp2) and pkg-config, which
# SwiftPM asks for their flags. `make build`, `make release` and `make run` install only these.
BUILD_PACKAGES := pkg-config libevent-dev libssl-dev libmagic-dev zlib1g-dev libyaml-dev libnghttp2-dev
# Debian packages the tests run or import, on top of BUILD_PACKAGES (`make deps`, `make test`):
# the clients and servers the integration tests and the conformance matrix start, and the
# Python modules the tests and the matrix import, from Debian. The one thing from PyPI is the
# SDK venv below. The inspection tests start Debian's clamd (clamav-daemon; each test writes
# its own one-signature database, freshclam never runs) and judge stripped images with
# exiftool, Pillow (python3-pil, python3-piexif writes the GPS EXIF), dwebp (webp) and
# heif-enc/heif-convert (libheif-examples). The shared-state tests start Debian's redis-server
# (and moto_server, from the SDK venv, for the S3 tus store).
TEST_PACKAGES := curl ca-certificates openssl mount php-cli golang-go nodejs chromium fonts-liberation \
	python3 python3-requests python3-werkzeug python3-jwt python3-cryptography python3-venv \
	python3-h2 python3-httpx nghttp2-client strace \
	clamav-daemon libimage-exiftool-perl python3-pil python3-piexif webp libheif-examples \
	redis-server
# The Python every script and test runs: Debian's. The Swift tests read FORMGATE_PYTHON.
PYTHON := /usr/bin/python3
export FORMGATE_PYTHON := $(PYTHON)
# The vendors' own SDKs, the oracles of the upload-credential tests (botocore, boto3, moto
# with its server, qiniu, oss2, cos-python-sdk-v5), tuspy and opentelemetry-proto (the tracing
# tests' OTLP parser), come from PyPI into a virtual environment `make test` creates (Debian's
# Python refuses `pip install` into the system, PEP 668): 78 packages with their dependencies, each pinned by version and sha256 in
# scripts/sdk-requirements.txt (scripts/pin-sdk-requirements.py writes it from
# sdk-requirements.in) and installed with --require-hashes --no-deps. Without build isolation:
# the two source packages (crcmod, oss2) build with the venv's own setuptools (Debian's), so
# pip fetches nothing unpinned. An oracle that changes under the tests is no oracle. The tests
# read FORMGATE_SDK_PYTHON and fail when it is missing.
SDK_VENV := .build/sdk-venv
SDK_REQUIREMENTS := scripts/sdk-requirements.txt
export FORMGATE_SDK_PYTHON := $(CURDIR)/$(SDK_VENV)/bin/python
# nginx, haproxy and caddy: the plain proxies FormGate is measured beside (Debian's 1.22, 2.6
# and 2.6); strace, linux-perf and gcc: the profile phase (syscalls, samples, the allocation
# counter); valgrind: `make h2-instructions`; clamav-daemon, python3-pil and python3-piexif: the
# inspection rows (scripts/bench_inspection.py: clamd, and the JPEG it makes); redis-server: the
# shared rate-limit row (scripts/bench_shared.py).
BENCH_PACKAGES := nginx haproxy caddy golang-go gnuplot-nox strace linux-perf gcc nghttp2-client valgrind \
	clamav-daemon python3-pil python3-piexif redis-server

SWIFT_FLAGS := -Xswiftc -warnings-as-errors -Xcc -Werror
# Release builds also optimise across modules: the hot path crosses HTTPCore, HTTP1, the parser
# and ProxyCore, and unspecialised generics there cost ~3 µs per 4 KiB request (bench profile).
# They leave exclusivity to the compiler's static checks and the debug builds the tests run:
# the dynamic checks (swift_beginAccess on every class property touched) were 17 % of the
# proxy's own instructions per h2 4 KiB upload, counted as `make h2-instructions` counts them.
RELEASE_FLAGS := $(SWIFT_FLAGS) -Xswiftc -cross-module-optimization -Xswiftc -enforce-exclusivity=unchecked
FORMAT_PATHS := Package.swift Sources Tests Fuzz

.PHONY: all build release test lint format build-deps deps sdk-venv bench run fuzz robustness conformance soak clean

# Executions per fuzz target in `make fuzz` (libFuzzer -runs; docs/robustness.md needs 10 M).
# `make test` runs each target for 30 s instead.
FUZZ_RUNS ?= 10000000

all: build

build-deps:
	@scripts/ensure-packages.sh $(BUILD_PACKAGES)

deps: build-deps
	@scripts/ensure-packages.sh $(TEST_PACKAGES)

build: build-deps
	swift build $(SWIFT_FLAGS)

# The release binary the Docker image ships (Swift runtime linked statically).
release: build-deps
	swift build -c release $(RELEASE_FLAGS) --static-swift-stdlib --product formgate

lint:
	swift format lint --strict --recursive $(FORMAT_PATHS)

format:
	swift format format --in-place --recursive $(FORMAT_PATHS)

# The SDK venv, made once per requirements file (the stamp is its sha256).
sdk-venv: deps
	@stamp="$(SDK_VENV)/.requirements"; want=$$(sha256sum $(SDK_REQUIREMENTS) | cut -d' ' -f1); \
	if [ "$$(cat $$stamp 2>/dev/null)" != "$$want" ]; then \
		rm -rf $(SDK_VENV) && $(PYTHON) -m venv $(SDK_VENV) && \
		$(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
			--no-build-isolation -r $(SDK_REQUIREMENTS) && \
		echo "$$want" > $$stamp; fi

test: deps lint release sdk-venv
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build
	$(PYTHON) Tests/Conformance/matrix.py
	scripts/fuzz.sh 30

# Real clients x real servers through the release binary (also part of `make test`).
conformance: deps release sdk-venv
	$(PYTHON) Tests/Conformance/matrix.py

# 30 minutes of mixed good and hostile load on the release binary (not part of `make test`).
SOAK_SECONDS ?= 1800
soak: deps release
	$(PYTHON) scripts/soak.py $(SOAK_SECONDS)

fuzz: build-deps
	FUZZ_SEED=0 FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_REPORT=.build/robustness/fuzz-report.txt scripts/fuzz.sh

# docs/robustness.md from runs of the code in the tree: one `make fuzz`, the robustness suites
# and the conformance matrix (each recorded with the code it ran on by scripts/provenance.py),
# and `make soak` unless a passing soak of this code exists; the report refuses inputs from other
# code (see scripts/robustness-report.py). About an hour: 30 min of soak, ~25 min of fuzzing.
robustness: deps sdk-venv
	$(MAKE) fuzz
	$(MAKE) release
	swift build --build-tests $(SWIFT_FLAGS)
	$(PYTHON) scripts/provenance.py run tests --collect .build/test-figures -- \
		swift test --skip-build --filter "FaultTests|ProtocolTests|HostileCorpusTests|DescriptorLimitTests|HTTP2HostileTests|HTTP2RecorderTests|HTTP2AmplificationTests|TLSRecordLayerTests|TLSTransportTests|AuthHostileTests|TusResumeTests|TusRefusalTests|TusOwnershipTests|TusHostileTests|ScanFailureTests|ScanLoadTests|StripTests|SharedRateLimitTests|SharedRateLimitHostileTests|SharedRateLimitKeyTests|TusS3Tests|BodyTotalTests|LiveViewTests|ProxyTracingTests"
	$(PYTHON) scripts/provenance.py run conformance --collect .build/conformance.json -- \
		$(PYTHON) Tests/Conformance/matrix.py
	$(PYTHON) scripts/robustness-report.py --check soak || $(MAKE) soak
	$(PYTHON) scripts/robustness-report.py

# The in-process parser benchmark and the side-by-side proxy benchmark (direct, nginx, HAProxy,
# Caddy, a Go rewriter, FormGate's routes; a Go load generator and a verifying Go sink that
# bench.py builds into .build/bench/): docs/benchmarks.md, docs/benchmarks.png and the README's
# bench block.
bench: deps release
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	swift build -c release $(RELEASE_FLAGS) --product multipart-bench
	$(PYTHON) scripts/bench.py

# One slow upstream among 100 HTTP/2 streams of one connection (issue 16): the other 99's
# completion times with and without it, three times (scripts/h2-slow-stream.py).
.PHONY: h2-slow-stream
h2-slow-stream: deps release
	$(PYTHON) scripts/h2-slow-stream.py --repeat 3

# Instructions per h2 4 KiB upload over TLS, FormGate against nginx, counted by callgrind: figures
# that do not move with the machine's load (scripts/profile/h2-instructions.sh; it uses the Go
# sink and body writer `make bench` builds).
.PHONY: h2-instructions
h2-instructions: deps release
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	scripts/profile/h2-instructions.sh

run: build-deps
	swift build -c release $(RELEASE_FLAGS) --product formgate
	@scripts/run-demo.sh

clean:
	swift package clean
