# graphmem — top-level entry points. CMake does the building; this file installs what is missing
# (Debian packages), configures and runs.
#   make        build everything into build/ (the command is build/graphmem)
#   make run    build and run `graphmem plan` on the embedded example
#   make test   build with ASan + UBSan into build/asan and run every test (CTest), then the
#               executor's full matrix in the Release build (build/)
#   make tsan   build with ThreadSanitizer into build/tsan and run the concurrent tests (label tsan)
#   make bench  build and run the benchmarks of BENCHMARKS.md (load, passes, plan, allocator, scale)
#   make fuzz   build the libFuzzer targets with clang and run each FUZZ_SECONDS (docs/FUZZING.md)
#   make valgrind  the command line under Valgrind over the shared models (tests/valgrind_cli.sh)
#   make install   build (Release, build/) and install the command, library, headers, man page,
#                  pkg-config file and CMake package under PREFIX (default /usr/local); DESTDIR stages

DEBS     := build-essential cmake pkg-config libcjson-dev libcmocka-dev \
            libprotobuf-c-dev protobuf-c-compiler libonnx-dev libjemalloc-dev
# What only the tests need: groff renders the man page (tests/man_page.sh); Chromium, Graphviz
# and libpng draw and read back the pictures (tests/svg_chromium.sh); libonnx-testdata holds ONNX's
# backend test suite (tests/onnx_backend.sh), whose output tensors python3-onnx reads
# (tests/onnx_outputs.py).
TEST_DEBS := groff-base chromium graphviz libpng-dev libonnx-testdata python3-onnx
BUILD    := build
ASAN     := build/asan
TSAN     := build/tsan
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX   ?= /usr/local
DESTDIR  ?=

.PHONY: all run test tsan deps test-deps install-debs bench bench-deps clean fuzz fuzz-deps valgrind install

all: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The command alone (its library and the command, not the tests or benchmarks), quietly: the
# build's output is shown only when it fails.
run: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >$(BUILD)/make-run.log 2>&1 && \
	  cmake --build $(BUILD) -j $(JOBS) --target graphmem_cli >>$(BUILD)/make-run.log 2>&1 || \
	  { cat $(BUILD)/make-run.log; echo "make run: the build failed (log above, in $(BUILD)/make-run.log)"; exit 1; }
	@./$(BUILD)/graphmem plan

test: deps test-deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DGM_SANITIZE=ON -DGM_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ctest --output-on-failure -j $(JOBS)
	@# The executor's full matrix (resnet18 and the transformer on 1-8 streams, memory first and the
	@# learned plan compared on them) in the optimized build: under the sanitizers its per-byte
	@# checks take minutes, and there it runs a reduced set (tests/test_executor_dynamic.c).
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target test_executor_dynamic >/dev/null
	cd $(BUILD) && ctest --output-on-failure -R '^test_executor_dynamic$$'

tsan: deps
	cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=Debug -DGM_TSAN=ON -DGM_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build $(TSAN) -j $(JOBS)
	cd $(TSAN) && ctest --output-on-failure -L tsan -j $(JOBS)

bench: all bench-deps
	./bench/run_load_bench.sh $(BUILD)
	./bench/run_passes_bench.sh $(BUILD)
	./bench/run_plan_bench.sh $(BUILD)
	./bench/run_alloc_bench.sh $(BUILD)
	./bench/run_pipeline_bench.sh $(BUILD)

# The allocator benchmark's peers (jemalloc, mimalloc): installed with apt-get as root; otherwise
# the exact command is printed and the benchmark skips the missing peer (kept out of `deps`).
BENCH_DEBS := libjemalloc-dev libmimalloc-dev
bench-deps:
	@missing=""; \
	for p in $(BENCH_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "allocator benchmark peers missing (they will be skipped); to add them, run as root:"; \
	    echo "  apt-get update && apt-get install -y$$missing"; \
	  fi; \
	fi

# Installs the Debian packages the build needs when one is missing: with apt-get as root,
# otherwise prints the exact command and stops.
deps:
	@$(MAKE) --no-print-directory install-debs PKGS="$(DEBS)"

test-deps:
	@$(MAKE) --no-print-directory install-debs PKGS="$(TEST_DEBS)"

install-debs:
	@missing=""; \
	for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages; run as root:"; \
	    echo "  apt-get update && apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

# libFuzzer needs clang (the runtime comes with Debian's clang package); kept out of `deps`,
# which the ordinary build needs alone. Seconds per target; FUZZ_SECONDS=10 is the smoke run.
FUZZ_SECONDS ?= 60
fuzz: deps fuzz-deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh

fuzz-deps:
	@command -v clang >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing: clang"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null || exit 1; \
	  else \
	    echo "clang is missing; run as root:"; echo "  apt-get update && apt-get install -y clang"; exit 1; \
	  fi; }

valgrind: all
	@command -v valgrind >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null || exit 1; \
	  else echo "valgrind is missing; run as root: apt-get install -y valgrind"; exit 1; fi; }
	./tests/valgrind_cli.sh $(BUILD)/graphmem .

# cmake --install reads DESTDIR from the environment; the prefix is given here, so one build
# installs anywhere (graphmem.pc is written at install time with that prefix).
install: all
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD)
