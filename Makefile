# FormGate — `make test` runs every check CI runs; `make bench` measures; `make run` serves.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

# Debian packages the build and the tests need (installed when missing).
TEST_PACKAGES := libevent-dev libssl-dev libyaml-dev zlib1g-dev libmagic-dev pkg-config curl php-cli ca-certificates openssl \
	golang-go chromium fonts-liberation nodejs
# Python packages the conformance matrix's client and server need (from PyPI when missing).
PYTHON_PACKAGES := requests werkzeug
BENCH_PACKAGES := nginx golang-go gnuplot-nox

SWIFT_FLAGS := -Xswiftc -warnings-as-errors -Xcc -Werror
FORMAT_PATHS := Package.swift Sources Tests Fuzz

.PHONY: all build release test lint format deps bench run fuzz robustness conformance soak clean

# Seconds per fuzz target: `make test` runs 30, `make fuzz` as long as you like.
FUZZ_SECONDS ?= 600

all: build

deps:
	@scripts/ensure-packages.sh $(TEST_PACKAGES)
	@python3 -c "import requests, werkzeug" 2>/dev/null || python3 -m pip install --quiet $(PYTHON_PACKAGES)

build: deps
	swift build $(SWIFT_FLAGS)

# The release binary the Docker image ships (Swift runtime linked statically).
release: deps
	swift build -c release $(SWIFT_FLAGS) --static-swift-stdlib --product formgate

lint:
	swift format lint --strict --recursive $(FORMAT_PATHS)

format:
	swift format format --in-place --recursive $(FORMAT_PATHS)

test: deps lint release
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build
	python3 Tests/Conformance/matrix.py
	scripts/fuzz.sh 30

# Real clients x real servers through the release binary (also part of `make test`).
conformance: deps release
	python3 Tests/Conformance/matrix.py

# 30 minutes of mixed good and hostile load on the release binary (not part of `make test`).
SOAK_SECONDS ?= 1800
soak: deps release
	python3 scripts/soak.py $(SOAK_SECONDS)

fuzz: deps
	FUZZ_SEED=0 scripts/fuzz.sh $(FUZZ_SECONDS)

# docs/robustness.md: a fuzz run of FUZZ_SECONDS per target, the robustness tests, the
# conformance matrix, and the last `make soak` report.
robustness: fuzz release
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build --filter "FaultTests|ProtocolTests|HostileCorpusTests"
	python3 Tests/Conformance/matrix.py
	python3 scripts/robustness-report.py

# The in-process parser benchmark and the side-by-side proxy benchmark (direct, nginx, a Go
# rewriter, FormGate's routes; a Go load generator and a verifying Go sink that bench.py builds
# into .build/bench/): docs/benchmarks.md, docs/benchmarks.png and the README's bench block.
bench: deps release
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	swift build -c release $(SWIFT_FLAGS) --product multipart-bench
	python3 scripts/bench.py

run: deps
	swift build -c release $(SWIFT_FLAGS) --product formgate
	@scripts/run-demo.sh

clean:
	swift package clean
