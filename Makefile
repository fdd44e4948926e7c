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
FUZZ_UNITS_SECONDS ?= 10
FUZZ_DB_SECONDS ?= 15
FUZZ_INFTRACE_SECONDS ?= 10
FUZZ_FABRIC_SECONDS ?= 15

.PHONY: all deps configure fabsim build run test test-release test-asan check-long fuzz-smoke \
        bench validate clean install format

all: build

# $(call quietly,LOG,COMMAND): COMMAND's output goes to LOG and is shown
# only when it fails, so that `make run` prints only the run (and errors).
comma := ,
quietly = mkdir -p $(dir $(1)) && { $(2) ; } >$(1) 2>&1 || { cat $(1); echo "make: failed; its output: $(1)" >&2; exit 1; }

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
	@$(MAKE) -s --no-print-directory report/node_modules/.package-lock.json

# Browser-side assets of report.html (Chart.js) and the report test's driver
# (playwright-core), exactly as report/package-lock.json pins them.
report/node_modules/.package-lock.json: report/package.json report/package-lock.json
	cd report && npm ci --no-audit --no-fund

configure: deps
	@$(call quietly,$(BUILD)/make-configure.log,cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release)

# The binary alone (what `make run`, `install` and `validate` need).
fabsim: configure
	@$(call quietly,$(BUILD)/make-build.log,cmake --build $(BUILD) -j $(JOBS) --target fabsim)

# Everything: the binary, the test executables, the benchmarks.
build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: fabsim
	@./$(BUILD)/fabsim run $(SCENARIO)

# The Release suite, the sanitizer suite and the fuzz smoke run. The long
# cases (ctest label `long`) are not in it: `make check-long`. The sanitizer
# suite runs every test but the checks of the sources alone (label `static`:
# tests/arch, the same result in every build), which the Release suite runs.
# What each part costs: docs/testing.md.
test: deps test-release test-asan fuzz-smoke
	@echo "make test: all suites passed"

test-release: configure
	@$(call quietly,$(BUILD)/make-build.log,cmake --build $(BUILD) -j $(JOBS) --target fabsim_tests)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE long

test-asan: deps
	@$(call quietly,$(BUILD_ASAN)/make-configure.log,cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DFABSIM_SANITIZE=ON)
	@$(call quietly,$(BUILD_ASAN)/make-build.log,cmake --build $(BUILD_ASAN) -j $(JOBS) --target fabsim_tests)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE 'long|static'

# The long cases, which `make test` (and so CI) leaves out: the Release
# build's tests labelled `long`, each the long twin (NAME_long, run with
# FABSIM_TEST_LONG=1) of a test whose short cases `make test` runs:
#   backend/test_routing_long   test_ring_64: the ring at 64 nodes, 16 leaves
#                               (80 % of test_routing's time; 8 and 16 nodes
#                               stay in make test)
#   cli/test_calibrate_long     the joint fit of every shipped nccl-tests
#                               sample (make test fits two measured ones)
#   pdes/mpi_run_long           the data-parallel step on 64 GPUs (make test:
#                               16, as the sanitizer build runs it)
check-long: configure
	@$(call quietly,$(BUILD)/make-build.log,cmake --build $(BUILD) -j $(JOBS) --target fabsim_tests)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L long

# Coverage-guided fuzzing of every parser of user input, for a bounded time
# (about 85 s), each target seeded with every shipped file of its input:
#   fuzz_scenario   scenario YAML and --set (units, lists, classes, jobs,
#                   faults) and a trace workload's files and class lists:
#                   fuzz/corpus/, every examples/**/*.yaml and tests/**/*.yaml
#   fuzz_units      bandwidths, times, sizes, round trip through the
#                   canonical text: fuzz/corpus_units/ and every value with
#                   a unit in examples/**/*.yaml
#   fuzz_nccltests  nccl-tests output for calibrate (and the NCCL_ALGO and
#                   NCCL_PROTO it echoes): fuzz/corpus_nccltests/,
#                   examples/nccl-tests/* and validate/curves/*
#   fuzz_chakra     Chakra execution traces: fuzz/corpus_chakra/ and
#                   examples/traces/*
#   fuzz_db         results databases as compare --db reads them: the
#                   databases of a run and of a sweep of the Release build
#   fuzz_inftrace   serving request traces (Vidur's CSV columns):
#                   fuzz/corpus_inftrace/ and examples/inference/*
#   fuzz_fabric     fabric files (JSON/YAML graphs, ibnetdiscover output) for
#                   fabric.topology: file: examples/fabrics/*, fuzz/corpus_fabric/
FUZZ_TARGETS := fuzz_scenario fuzz_units fuzz_nccltests fuzz_chakra fuzz_db fuzz_inftrace \
                fuzz_fabric
FUZZ_RUN = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
fuzz-smoke: deps fabsim
	@$(call quietly,$(BUILD_FUZZ)/make-configure.log,CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug -DFABSIM_FUZZ=ON -DFABSIM_TESTS=OFF)
	@$(call quietly,$(BUILD_FUZZ)/make-build.log,cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $(FUZZ_TARGETS))
	@rm -rf $(BUILD_FUZZ)/seeds && mkdir -p $(BUILD_FUZZ)/seeds/scenario $(BUILD_FUZZ)/seeds/units \
	  $(BUILD_FUZZ)/seeds/db $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/corpus_units \
	  $(BUILD_FUZZ)/corpus_nccltests $(BUILD_FUZZ)/corpus_chakra $(BUILD_FUZZ)/corpus_db \
	  $(BUILD_FUZZ)/corpus_inftrace $(BUILD_FUZZ)/corpus_fabric
	@find examples tests -name '*.yaml' | while read -r f; do cp "$$f" "$(BUILD_FUZZ)/seeds/scenario/$$(echo "$$f" | tr / _)"; done
	@grep -rhoE ':[[:space:]]+[0-9][0-9.eE+-]*[[:space:]]*[A-Za-z/]+[[:space:]]*(#.*)?$$' --include='*.yaml' examples | \
	  sed -E 's/^:[[:space:]]+//; s/[[:space:]]*(#.*)?$$//' | sort -u | \
	  while read -r v; do printf '%s' "$$v" >"$(BUILD_FUZZ)/seeds/units/$$(printf '%s' "$$v" | tr -c 'A-Za-z0-9.' _)"; done
	@$(call quietly,$(BUILD_FUZZ)/make-seeds.log,rm -rf $(BUILD_FUZZ)/seed-runs && \
	  ./$(BUILD)/fabsim run examples/default.yaml --quiet --set output.sample_interval=2ms \
	    --set output.dir=$(BUILD_FUZZ)/seed-runs/run && \
	  ./$(BUILD)/fabsim sweep examples/default.yaml --vary fabric.routing=ecmp$(comma)adaptive --jobs 1 \
	    --quiet --set output.sample_interval=2ms --out $(BUILD_FUZZ)/seed-runs/sweep)
	@find $(BUILD_FUZZ)/seed-runs -name '*.sqlite' | while read -r f; do cp "$$f" "$(BUILD_FUZZ)/seeds/db/$$(echo "$$f" | tr / _)"; done
	./$(BUILD_FUZZ)/fuzz_scenario -max_total_time=$(FUZZ_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/seeds/scenario fuzz/corpus
	./$(BUILD_FUZZ)/fuzz_units -max_total_time=$(FUZZ_UNITS_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_units $(BUILD_FUZZ)/seeds/units fuzz/corpus_units
	./$(BUILD_FUZZ)/fuzz_nccltests -max_total_time=$(FUZZ_NCCLTESTS_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_nccltests examples/nccl-tests validate/curves fuzz/corpus_nccltests
	./$(BUILD_FUZZ)/fuzz_chakra -max_total_time=$(FUZZ_CHAKRA_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_chakra examples/traces fuzz/corpus_chakra
	./$(BUILD_FUZZ)/fuzz_db -max_total_time=$(FUZZ_DB_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_db $(BUILD_FUZZ)/seeds/db
	./$(BUILD_FUZZ)/fuzz_inftrace -max_total_time=$(FUZZ_INFTRACE_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_inftrace examples/inference fuzz/corpus_inftrace
	./$(BUILD_FUZZ)/fuzz_fabric -max_total_time=$(FUZZ_FABRIC_SECONDS) $(FUZZ_RUN) \
	  $(BUILD_FUZZ)/corpus_fabric examples/fabrics fuzz/corpus_fabric

# The binary and its man page (fabsim.1) under PREFIX (default /usr/local).
PREFIX ?= /usr/local
install: fabsim
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target bench_phold
	./$(BUILD)/bench_phold

# fabsim's figures against published measurements of real clusters (not part
# of `make test`: minutes, not seconds). The table and its sources:
# docs/validation.md; the cases: validate/cases.json.
validate: fabsim
	validate/run.sh --baseline --fabsim ./$(BUILD)/fabsim --markdown $(BUILD)/validation.md

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)

# Lay out every C source as .clang-format says (ctest arch/test_format checks it).
format:
	git ls-files '*.c' '*.h' | xargs clang-format -i
