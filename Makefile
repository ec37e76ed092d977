# FormGate — `make test` runs every check CI runs; `make bench` measures; `make run` serves.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

# Debian packages the build and the tests need (installed when missing).
TEST_PACKAGES :=
BENCH_PACKAGES :=

SWIFT_FLAGS := -Xswiftc -warnings-as-errors -Xcc -Werror
FORMAT_PATHS := Package.swift Sources Tests

.PHONY: all build test lint format deps bench run clean

all: build

deps:
	@scripts/ensure-packages.sh $(TEST_PACKAGES)

build: deps
	swift build $(SWIFT_FLAGS)

lint:
	swift format lint --strict --recursive $(FORMAT_PATHS)

format:
	swift format format --in-place --recursive $(FORMAT_PATHS)

test: deps lint
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build

bench: deps
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	swift build -c release $(SWIFT_FLAGS) --product multipart-bench
	.build/release/multipart-bench

run:
	@echo "The proxy itself (formgate run, demo-upstream) lands with issue #3; this checkout"
	@echo "holds the multipart parser and encoder modules. Try 'make test' or 'make bench'."
	@exit 1

clean:
	swift package clean
