# Entry points: `make run` starts the broker on :6632 with an embedded PostgreSQL and its
# dashboard at /; `make test` runs every suite CI checks. Both install what is missing first:
# `make run` only what running the broker needs, `make test` also what the tests need
# (scripts/install-deps.sh run|test).
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps deps-run configure configure-run build build-run web ext ext-install run test check lint browser unit integration integration-ext regress isolation fuzz bench bench-broker bench-calls bench-codec bench-lanes bench-shards bench-snapshot bench-stream soak sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh test

deps-run:
	@bash scripts/install-deps.sh run

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DQUEEN_WERROR=ON \
		-DQUEEN_BUILD_TESTS=ON -DQUEEN_BUILD_BENCH=ON $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The broker alone, with the dashboard it serves (web/dist, committed, embedded at build
# time): no test or benchmark binary, so a fresh machine needs only the run dependencies. A
# build directory configured already keeps its tests and benchmarks (make run between make
# build and make test turns nothing off).
configure-run: deps-run
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DQUEEN_WERROR=ON \
		$(if $(wildcard $(BUILD_DIR)/CMakeCache.txt),,-DQUEEN_BUILD_TESTS=OFF -DQUEEN_BUILD_BENCH=OFF) \
		$(CMAKE_FLAGS) > /dev/null

build-run: configure-run
	@cmake --build $(BUILD_DIR) --target queen -j $(JOBS)

# Rebuilds web/dist from web/src with esbuild (npm); commit the result.
web:
	@cd web && npm ci --no-audit --no-fund --loglevel=error && node build.mjs

# The optional queen_ext extension (PGXS); ext-install puts it into PostgreSQL's directories.
ext: deps
	@$(MAKE) -s -f Makefile.pgxs

ext-install: deps
	@bash scripts/install-ext.sh

# The snapshot and the activity flush run more often than their production defaults, so the
# dashboard's numbers follow a curl push within seconds; override either on the command line.
RUN_STATS_INTERVAL_MS ?= 2000
RUN_METRICS_FLUSH_MS ?= 5000

run: build-run
	QUEEN_STATS_INTERVAL_MS=$${QUEEN_STATS_INTERVAL_MS:-$(RUN_STATS_INTERVAL_MS)} \
	QUEEN_METRICS_FLUSH_MS=$${QUEEN_METRICS_FLUSH_MS:-$(RUN_METRICS_FLUSH_MS)} ./$(BUILD_DIR)/queen

unit: build
	./$(BUILD_DIR)/queen_unit_tests

# FILTER: a GoogleTest filter (make integration FILTER='HostileHttp.*'); all tests without it.
FILTER ?= *

integration: build
	./$(BUILD_DIR)/queen_integration_tests --gtest_filter='$(FILTER)'

# The same suite with CREATE EXTENSION queen_ext in every test database.
integration-ext: build ext-install
	QUEEN_TEST_EXTENSION=1 ./$(BUILD_DIR)/queen_integration_tests --gtest_filter='$(FILTER)'

# The dashboard driven by headless chromium against a real broker and PostgreSQL
# (tests/browser); screenshots in BUILD_DIR/test-logs/browser.
browser: build
	bash tests/browser/run.sh $(BUILD_DIR)

# TEST: regress/sql files by name (make regress TEST='streams push'); SPEC: isolation specs
# (make isolation SPEC=claim_floor_race); all of them without.
regress: build ext-install
	REGRESS_TESTS='$(TEST)' bash scripts/run-regress.sh $(BUILD_DIR)
	@if [ -z '$(TEST)' ]; then bash scripts/run-isolation.sh $(BUILD_DIR); fi

isolation: build ext-install
	ISOLATION_SPECS='$(SPEC)' bash scripts/run-isolation.sh $(BUILD_DIR)

# The inner loop, under 5 minutes after the build: the structure checks, the unit tests,
# pg_regress, the isolation specs and a smoke subset of the integration suite (push, pop, ack,
# a group, a dead letter), stock and with queen_ext (scripts/run-tests.sh check). make test
# stays the whole suite, and CI runs that.
check: configure
	$(timed_build)
	@$(MAKE) --no-print-directory ext-install
	bash scripts/run-tests.sh $(BUILD_DIR) 0 check

FUZZ_SECONDS ?= 30

# The build, its wall time kept for the test summary (scripts/run-tests.sh).
define timed_build
@mkdir -p $(BUILD_DIR)/test-logs
@started=$$(date +%s); cmake --build $(BUILD_DIR) -j $(JOBS) && \
	echo $$(( $$(date +%s) - started )) > $(BUILD_DIR)/test-logs/build.seconds
endef

# Everything CI checks: unit tests, pg_regress (stock procedures and queen_ext), the
# isolation specs (concurrent sessions) twice and the integration suite twice (stock
# PostgreSQL, then with queen_ext in the database), the dashboard's browser suite, and each
# fuzz target for FUZZ_SECONDS; the summary gives the build's and each suite's wall time, and
# the last line is "N passed, N failed" over all of them (scripts/run-tests.sh).
test: configure
	$(timed_build)
	@$(MAKE) --no-print-directory ext-install
	bash scripts/run-tests.sh $(BUILD_DIR) $(FUZZ_SECONDS)

# clang-format in check mode and clang-tidy (.clang-format, .clang-tidy) over broker/; make
# test runs the format check, clang-tidy takes longer (README.md, "Lint").
lint: build
	bash scripts/lint.sh format
	bash scripts/lint.sh tidy $(BUILD_DIR)

fuzz: build
	bash scripts/run-fuzz.sh $(BUILD_DIR) $(or $(SECONDS),600)

# The comparison table: queen's scenarios, PgQ and pg-boss, and the machine's ceilings on one
# private PostgreSQL (docs/benchmarks.md). bench-broker: the broker alone on its embedded
# PostgreSQL; soak: 10 minutes at a steady rate with the broker's RSS sampled.
bench: build
	bash bench/compare.sh $(BUILD_DIR)

bench-broker: build
	bash bench/run.sh $(BUILD_DIR)

# The headline directly and through a PL/Proxy shard proxy over 1, 2 and 4 shards, each shard
# its own PostgreSQL cluster on this machine (bench/shards.sh, docs/benchmarks.md "Shards").
bench-shards: build
	bash bench/shards.sh $(BUILD_DIR)

# Streams: map -> tumbling count -> sink over 1,000 partitions, one cycle per source-partition
# batch, on a private PostgreSQL (bench/stream.sh, docs/benchmarks.md "Streams"). The held-
# snapshot run of the same workload: make bench-snapshot HOLDERS=rr WORKLOAD=stream.
bench-stream: build
	bash bench/stream.sh $(BUILD_DIR)

soak: build
	bash bench/soak.sh $(BUILD_DIR)

# Held snapshots (issue 12): per holder (an idle REPEATABLE READ session, a pg_dump loop, a
# standby with hot_standby_feedback) DURATION minutes of the headline load with it and
# DURATION minutes with its control, on two primaries taking turns minute by minute;
# throughput and hot-table bloat per minute (docs/benchmarks.md). DURATION in minutes;
# HOLDERS selects holders ("none": an A/A run, the method's noise; bench/snapshot.sh).
DURATION ?= 10

bench-snapshot: build
	DURATION=$(DURATION) bash bench/snapshot.sh $(BUILD_DIR)

# The stock codec path vs queen_ext, alternating runs (docs/benchmarks.md).
bench-codec: build ext-install
	bash bench/compare-codec.sh $(BUILD_DIR)

# Instructions (callgrind) one pgbench call of queen.push, queen.pop and queen.ack costs in a
# backend, stock and with queen_ext, for the tree SOURCE (default: this one), sent by
# pgbench's PROTOCOL (simple, extended: unnamed statements, prepared).
SOURCE ?= .
PROTOCOL ?= simple

bench-calls: ext-install
	CGOPS_PROTOCOL=$(PROTOCOL) bash bench/callgrind_ops.sh $(SOURCE) stock
	CGOPS_PROTOCOL=$(PROTOCOL) bash bench/callgrind_ops.sh $(SOURCE) ext

# What a lane costs: the headline load over 100 to 1,000,000 idle partitions, pops of one and
# of 100 lanes, stock and queen_ext; PostgreSQL µs per pop and ack, CPU per message, bytes per
# idle lane, a callgrind profile of one claim and one ack (bench/lanes.sh, docs/benchmarks.md
# "Per-lane cost"). LANES, POP_LANES, PATHS, MESSAGES choose a subset.
bench-lanes: build ext-install
	bash bench/lanes.sh $(BUILD_DIR)

sanitize:
	$(MAKE) BUILD_DIR=build-asan CMAKE_FLAGS=-DQUEEN_SANITIZE=ON test

clean:
	rm -rf $(BUILD_DIR) build-asan
	$(MAKE) -s -f Makefile.pgxs clean
