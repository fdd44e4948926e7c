# fabsim: the two commands a user needs are `make run` and `make test`.
# Both install what is missing from Debian (as root), then build with CMake.

DEBIAN_PACKAGES := build-essential cmake pkg-config libyaml-dev libjansson-dev libcmocka-dev jq \
                   clang clang-format cppcheck libclang-rt-14-dev libsqlite3-dev sqlite3 chromium nodejs groff-base \
                   openmpi-bin libopenmpi-dev libprotobuf-c-dev protobuf-c-compiler
# With Open MPI present the parallel engine is built and ctest runs its MPI
# tests under mpirun (1, 2 and 4 ranks, oversubscribed); without it
# (cmake -DFABSIM_MPI=OFF, or no MPI found) everything else builds and tests.
BUILD       ?= build
BUILD_ASAN  ?= build-asan
BUILD_FUZZ  ?= build-fuzz
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO    ?= examples/default.yaml
FUZZ_SECONDS ?= 30
FUZZ_NCCLTESTS_SECONDS ?= 15
FUZZ_CHAKRA_SECONDS ?= 15

.PHONY: all deps build run test test-release test-asan fuzz-smoke bench validate clean install format

all: build

# Install only the packages that are missing; never touch the machine otherwise.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "missing Debian packages:$$missing (run as root, or install them)"; exit 1; fi; \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v npm >/dev/null || { echo "installing: npm"; export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends npm; }
	@$(MAKE) --no-print-directory report/node_modules/.package-lock.json

# Browser-side assets of report.html (Chart.js) and the report test's driver
# (playwright-core), exactly as report/package-lock.json pins them.
report/node_modules/.package-lock.json: report/package.json report/package-lock.json
	cd report && npm ci --no-audit --no-fund

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/fabsim run $(SCENARIO)

test: deps test-release test-asan fuzz-smoke
	@echo "make test: all suites passed"

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DFABSIM_SANITIZE=ON >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# Coverage-guided fuzzing of the parsers (scenario, nccl-tests output, Chakra
# execution traces) for a bounded time.
fuzz-smoke: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug -DFABSIM_FUZZ=ON -DFABSIM_TESTS=OFF >/dev/null
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_scenario fuzz_nccltests fuzz_chakra
	mkdir -p $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/corpus_nccltests $(BUILD_FUZZ)/corpus_chakra
	find examples -name '*.yaml' | while read -r f; do cp "$$f" "$(BUILD_FUZZ)/corpus/$$(echo "$$f" | tr / -)"; done; cp fuzz/corpus/* $(BUILD_FUZZ)/corpus/
	cp examples/nccl-tests/* fuzz/corpus_nccltests/* $(BUILD_FUZZ)/corpus_nccltests/
	./$(BUILD_FUZZ)/fuzz_scenario -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -print_final_stats=1 $(BUILD_FUZZ)/corpus
	./$(BUILD_FUZZ)/fuzz_nccltests -max_total_time=$(FUZZ_NCCLTESTS_SECONDS) -timeout=10 \
	  -rss_limit_mb=2048 -print_final_stats=1 $(BUILD_FUZZ)/corpus_nccltests
	cp examples/traces/* fuzz/corpus_chakra/* $(BUILD_FUZZ)/corpus_chakra/
	./$(BUILD_FUZZ)/fuzz_chakra -max_total_time=$(FUZZ_CHAKRA_SECONDS) -timeout=10 \
	  -rss_limit_mb=2048 -print_final_stats=1 $(BUILD_FUZZ)/corpus_chakra

# The binary and its man page (fabsim.1) under PREFIX (default /usr/local).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	./$(BUILD)/bench_phold

# fabsim's figures against published measurements of real clusters (not part
# of `make test`: minutes, not seconds). The table and its sources:
# docs/validation.md; the cases: validate/cases.json.
validate: build
	validate/run.sh --baseline --fabsim ./$(BUILD)/fabsim --markdown $(BUILD)/validation.md

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)

# Lay out every C source as .clang-format says (ctest arch/test_format checks it).
format:
	git ls-files '*.c' '*.h' | xargs clang-format -i
