# make demo · make test · make lint · make bench — each but lint installs OpenBLAS first when it is missing.
SWIFT ?= swift

# The package's traits (Package.swift): the defaults are OpenBLAS and CLI (classify without ONNX or serve), which is
# all `make demo` builds. The tests, the server's tools and `make install` build every trait (naming traits turns the
# defaults off unless `default` is among them).
ALL_TRAITS = --traits default,ONNX,Serve
# The engine with no BLAS library at all (its own kernels), as an iOS build has it. `make test` compiles Tensor that
# way (the one module whose code the BLAS choice changes: Sources/Tensor/BLAS.swift), and runs the tensor and
# training tests again on the engine's own kernels (ODML_BLAS=builtin: the code such a build runs); `make
# test-no-blas` builds everything that way and runs every test there.
NO_BLAS = --disable-default-traits --traits CLI --scratch-path .build-noblas

.PHONY: demo test test-no-blas lint format bench bench-cli deps install fuzz docs browser-deps browser-test load-test arm64-deps arm64-check

PREFIX ?= /usr/local

# OpenBLAS's headers and pkg-config file (libopenblas-dev), and pkg-config itself, from Debian's packages.
deps:
	@if ! pkg-config --exists openblas 2>/dev/null; then \
		echo "OpenBLAS not found: installing libopenblas-dev and pkg-config with apt-get"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		command -v apt-get >/dev/null || { echo "error: no apt-get here; install OpenBLAS (with its pkg-config file 'openblas') by hand" >&2; exit 1; }; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libopenblas-dev pkg-config >/dev/null; \
		pkg-config --exists openblas || { echo "error: libopenblas-dev installed but pkg-config cannot find 'openblas'" >&2; exit 1; }; \
	fi

# The demo classifies the bundled example drawings and recordings with the shipped weights. Its classify has the
# default traits (no ONNX, no serve: nothing it does not run is built) and is linked self-contained, as
# `make install` links it: a fresh process loads no shared library, so one drawing takes about 4 ms instead of 9–10.
demo: deps
	$(SWIFT) build -c release --static-swift-stdlib -Xswiftc -static-executable --product classify
	@for shape in circle triangle square star other; do \
		echo "$$ .build/release/classify shape Datasets/examples/$$shape.csv"; \
		.build/release/classify shape Datasets/examples/$$shape.csv || exit 1; \
	done
	@for state in walking running still; do \
		echo "$$ .build/release/classify motion Datasets/examples/$$state.csv | head -4"; \
		.build/release/classify motion Datasets/examples/$$state.csv > .build/motion-demo.txt || exit 1; \
		head -4 .build/motion-demo.txt; \
	done
	@echo "$$ .build/release/classify inspect Weights/shape-classifier.int8.weights"
	@.build/release/classify inspect Weights/shape-classifier.int8.weights

test: deps browser-deps arm64-deps
	$(SWIFT) build --build-tests $(ALL_TRAITS)
	$(SWIFT) test --skip-build $(ALL_TRAITS)
	$(BROWSER_VENV)/bin/python scripts/browser_test.py --classify .build/debug/classify
	$(ARM64_CHECK)
	$(SWIFT) build $(NO_BLAS) --target Tensor
	ODML_BLAS=builtin $(SWIFT) test --skip-build $(ALL_TRAITS) --filter 'TensorTests|TrainTests'

test-no-blas:
	$(SWIFT) build --build-tests $(NO_BLAS)
	$(SWIFT) test --skip-build $(NO_BLAS)

# The C kernels built for ARM64 with the Swift toolchain's clang and run under qemu-user, against the same kernels on
# this machine (scripts/kernels_cross_check.py): Debian's aarch64 C library and qemu-user, installed when missing.
ARM64_SYSROOT = /usr/aarch64-linux-gnu
ARM64_CHECK = python3 scripts/kernels_cross_check.py --sysroot $(ARM64_SYSROOT)
arm64-deps:
	@if ! command -v qemu-aarch64 >/dev/null || [ ! -e $(ARM64_SYSROOT)/lib/crt1.o ] || ! ls /usr/lib/gcc-cross/aarch64-linux-gnu/*/crtbegin.o >/dev/null 2>&1; then \
		echo "installing qemu-user and the aarch64 C library with apt-get (for the ARM64 check of the C kernels)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		command -v apt-get >/dev/null || { echo "error: no apt-get here; install qemu-user and an aarch64 C library by hand" >&2; exit 1; }; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq qemu-user libc6-dev-arm64-cross libgcc-12-dev-arm64-cross >/dev/null; \
	fi

arm64-check: arm64-deps
	$(ARM64_CHECK)

# The pages of `classify serve` in headless Chromium (Debian's chromium package), driven by Playwright from PyPI in
# a venv of its own (.build-browser/venv): both installed here when missing. `make browser-test` runs it alone.
BROWSER_VENV = .build-browser/venv
browser-deps:
	@if ! command -v chromium >/dev/null; then \
		echo "chromium not found: installing Debian's chromium with apt-get (for the browser test)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@if ! $(BROWSER_VENV)/bin/python -c "import playwright" 2>/dev/null; then \
		echo "installing playwright from PyPI in $(BROWSER_VENV)"; \
		python3 -m venv $(BROWSER_VENV) && $(BROWSER_VENV)/bin/pip install -q playwright==1.65.2; \
	fi

browser-test: deps browser-deps
	$(SWIFT) build --product classify $(ALL_TRAITS)
	$(BROWSER_VENV)/bin/python scripts/browser_test.py --classify .build/debug/classify

# The code's layout and lint rules (.swift-format; swift-format is part of the Swift toolchain): `make lint` fails on
# any difference, `make format` rewrites the files in place.
FORMATTED = Sources Tests Examples Bench/Sources Fuzz/Sources Package.swift Bench/Package.swift Fuzz/Package.swift
lint:
	$(SWIFT) format lint --strict --configuration .swift-format --recursive $(FORMATTED)

format:
	$(SWIFT) format format --in-place --configuration .swift-format --recursive $(FORMATTED)

# The benchmarks are a package of their own (Bench/, with its bench-only dependency malloc-interposer), built in
# .build-bench. Every report runs even when an earlier one misses a target; make fails at the end if any did.
bench: deps
	$(SWIFT) build --package-path Bench --scratch-path .build-bench -c release --product bench
	@status=0; for report in engine shape motion onnx signal; do \
		echo "$$ .build-bench/release/bench $$report"; .build-bench/release/bench $$report || status=1; echo; \
	done; exit $$status

# `bench cli` times the classify binary beside bench (classify shape --dataset on 100,000 drawings), so both are built.
bench-cli: deps
	$(SWIFT) build --package-path Bench --scratch-path .build-bench -c release --product classify
	$(SWIFT) build --package-path Bench --scratch-path .build-bench -c release --product bench
	.build-bench/release/bench cli

# A self-contained release binary in PREFIX/bin, and the shipped weights where it looks for them,
# PREFIX/share/classify/Weights. The executable is fully static (-static-executable: the Swift runtime,
# Foundation, OpenBLAS's libopenblas.a from libopenblas-dev and glibc linked in), so starting it maps one file and
# applies no relocations and no symbol lookups; it needs no shared library at run time.
# Stripped in the build folder, then every file staged beside its place under a temporary name and only then
# renamed over the old one: a full disk or an interrupted copy leaves the installed classify as it was (the
# staged files are removed), never an empty bin/ or a half-written binary.
install: deps
	$(SWIFT) build -c release $(ALL_TRAITS) --static-swift-stdlib -Xswiftc -static-executable --product classify --scratch-path .build-static
	strip -o .build-static/release/classify.stripped .build-static/release/classify
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/classify/Weights"
	@set -e; bin="$(DESTDIR)$(PREFIX)/bin"; weights="$(DESTDIR)$(PREFIX)/share/classify/Weights"; \
	trap 'rm -f "$$bin/.classify.staged" "$$weights"/.*.weights.staged' EXIT; \
	install -m 755 .build-static/release/classify.stripped "$$bin/.classify.staged"; \
	for file in Weights/*.weights; do install -m 644 "$$file" "$$weights/.$${file#Weights/}.staged"; done; \
	for file in Weights/*.weights; do mv -f "$$weights/.$${file#Weights/}.staged" "$$weights/$${file#Weights/}"; done; \
	mv -f "$$bin/.classify.staged" "$$bin/classify"
	@echo "installed $(DESTDIR)$(PREFIX)/bin/classify and its weights in $(DESTDIR)$(PREFIX)/share/classify/Weights"

# API documentation: a DocC archive per library (Tensor, DataFiles, WeightsFormat, Models, Train) in .build/docs, from the public symbols and
# each module's catalog (Sources/MODULE/MODULE.docc); any warning (a broken link, an unknown symbol) fails it.
# `docc preview` or any static host shows an archive; DOCC_FLAGS="--transform-for-static-hosting" makes one servable.
DOCC ?= docc
DOCC_FLAGS ?=
docs: deps
	$(SWIFT) package dump-symbol-graph --minimum-access-level public > .build/symbolgraph.log 2>&1 || { cat .build/symbolgraph.log; exit 1; }
	@graphs=$$(sed -n 's/^Files written to //p' .build/symbolgraph.log); \
	for module in Tensor DataFiles WeightsFormat Models Train; do \
		rm -rf .build/docs/graphs/$$module && mkdir -p .build/docs/graphs/$$module; \
		cp $$graphs/$$module.symbols.json .build/docs/graphs/$$module/; \
		cp $$graphs/$$module@*.symbols.json .build/docs/graphs/$$module/ 2>/dev/null || true; \
		echo "$$ docc convert Sources/$$module/$$module.docc -> .build/docs/$$module.doccarchive"; \
		$(DOCC) convert Sources/$$module/$$module.docc --additional-symbol-graph-dir .build/docs/graphs/$$module \
			--fallback-display-name $$module --fallback-bundle-identifier org.ondeviceml.$$module \
			--output-path .build/docs/$$module.doccarchive --warnings-as-errors $(DOCC_FLAGS) || exit 1; \
	done

# Coverage-guided fuzzing of the readers (Fuzz/README.md): builds the libFuzzer targets (their own package, with
# ASan; -enable-testing lets them check the package-level CSV reader and checksum with @testable imports) and
# runs each for FUZZ_SECONDS on a fresh copy of its seed corpus in .build-fuzz/run/TARGET, printing libFuzzer's
# final figures; fails if any target crashes, hangs (> 1 s on one input) or passes 2 GB. Not in `make test`.
# FUZZ_FLAGS="-fork=1 -ignore_crashes=1" keeps a target going past a crash it already knows (it still fails).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= drawing motion weights api onnx
FUZZ_FLAGS ?=
fuzz: deps
	$(SWIFT) build --package-path Fuzz --scratch-path .build-fuzz -c release -Xswiftc -enable-testing \
		-Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -use-ld=lld
	@status=0; for target in $(FUZZ_TARGETS); do \
		name=Fuzz$$(echo $$target | sed 's/^api$$/API/; s/^onnx$$/ONNX/; s/^./\U&/'); run=.build-fuzz/run/$$target; \
		rm -rf $$run && mkdir -p $$run/corpus $$run/found && cp Fuzz/Corpus/$$target/* $$run/corpus/; \
		echo "$$ $$name $$run/corpus -dict=Fuzz/Dictionaries/$$target.dict -max_total_time=$(FUZZ_SECONDS) ..."; \
		SWIFT_BACKTRACE=enable=no .build-fuzz/release/$$name $$run/corpus -dict=Fuzz/Dictionaries/$$target.dict \
			-max_total_time=$(FUZZ_SECONDS) -timeout=1 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
			-artifact_prefix=$$run/found/ $(FUZZ_FLAGS) > $$run/log 2>&1; code=$$?; \
		grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' $$run/log; \
		grep -E '^#[0-9]+: cov:' $$run/log | tail -1; \
		found=$$(ls $$run/found); \
		if [ $$code -ne 0 ] || [ -n "$$found" ]; then \
			status=1; echo "$$name FAILED (exit $$code); the report is in $$run/log:"; \
			grep -E 'ERROR|Fatal error|SUMMARY|Test unit written|Base64' $$run/log | head -8; \
		else echo "$$name: no crash in $(FUZZ_SECONDS) s"; fi; echo; \
	done; exit $$status

# 200 clients posting drawings to `classify serve` for 30 s (wrk, from Debian's packages): requests/s, latency
# percentiles, errors and the server's memory.
load-test: deps
	@command -v wrk >/dev/null || { echo "installing wrk with apt-get"; apt-get install -y -qq wrk >/dev/null; }
	$(SWIFT) build -c release --product classify $(ALL_TRAITS)
	scripts/load_test.sh .build/release/classify 200 30
