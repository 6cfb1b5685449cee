# Entry points: `make run` starts the broker on :6632 with an embedded PostgreSQL;
# `make test` runs every suite CI checks. Both install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build ext ext-install run test unit integration integration-ext regress fuzz bench bench-broker bench-codec bench-snapshot soak sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DQUEEN_WERROR=ON $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The optional queen_ext extension (PGXS); ext-install puts it into PostgreSQL's directories.
ext: deps
	@$(MAKE) -s -f Makefile.pgxs

ext-install: deps
	@bash scripts/install-ext.sh

run: build
	./$(BUILD_DIR)/queen

unit: build
	./$(BUILD_DIR)/queen_unit_tests

integration: build
	./$(BUILD_DIR)/queen_integration_tests

# The same suite with CREATE EXTENSION queen_ext in every test database.
integration-ext: build ext-install
	QUEEN_TEST_EXTENSION=1 ./$(BUILD_DIR)/queen_integration_tests

regress: build ext-install
	bash scripts/run-regress.sh $(BUILD_DIR)
	bash scripts/run-isolation.sh $(BUILD_DIR)

FUZZ_SECONDS ?= 60

# Everything CI checks: unit tests, pg_regress (stock procedures and queen_ext), the
# isolation specs (concurrent sessions), the integration suite twice (stock PostgreSQL, then
# with queen_ext in every test database), and each fuzz target for FUZZ_SECONDS; the last
# line is "N passed, N failed" over all of them (scripts/run-tests.sh).
test: build ext-install
	bash scripts/run-tests.sh $(BUILD_DIR) $(FUZZ_SECONDS)

fuzz: build
	bash scripts/run-fuzz.sh $(BUILD_DIR) $(or $(SECONDS),600)

# The comparison table: queen's scenarios, PgQ and pg-boss, and the machine's ceilings on one
# private PostgreSQL (docs/benchmarks.md). bench-broker: the broker alone on its embedded
# PostgreSQL; soak: 10 minutes at a steady rate with the broker's RSS sampled.
bench: build
	bash bench/compare.sh $(BUILD_DIR)

bench-broker: build
	bash bench/run.sh $(BUILD_DIR)

soak: build
	bash bench/soak.sh $(BUILD_DIR)

# Held snapshots (issue 12): per holder (an idle REPEATABLE READ session, a pg_dump loop, a
# standby with hot_standby_feedback) DURATION minutes of the headline load with it and
# DURATION minutes with its control, throughput and hot-table bloat per minute
# (docs/benchmarks.md). DURATION in minutes; HOLDERS selects holders (bench/snapshot.sh).
DURATION ?= 10

bench-snapshot: build
	DURATION=$(DURATION) bash bench/snapshot.sh $(BUILD_DIR)

# The stock codec path vs queen_ext, alternating runs (docs/benchmarks.md).
bench-codec: build ext-install
	bash bench/compare-codec.sh $(BUILD_DIR)

sanitize:
	$(MAKE) BUILD_DIR=build-asan CMAKE_FLAGS=-DQUEEN_SANITIZE=ON test

clean:
	rm -rf $(BUILD_DIR) build-asan
	$(MAKE) -s -f Makefile.pgxs clean
