# Entry points: `make run` starts the broker on :6632 with an embedded PostgreSQL;
# `make test` runs every suite CI checks. Both install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test unit integration regress fuzz bench sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DQUEEN_WERROR=ON $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	./$(BUILD_DIR)/queen

unit: build
	./$(BUILD_DIR)/queen_unit_tests

integration: build
	./$(BUILD_DIR)/queen_integration_tests

regress: build
	bash scripts/run-regress.sh $(BUILD_DIR)

FUZZ_SECONDS ?= 30

test: build
	./$(BUILD_DIR)/queen_unit_tests
	bash scripts/run-regress.sh $(BUILD_DIR)
	./$(BUILD_DIR)/queen_integration_tests
	bash scripts/run-fuzz.sh $(BUILD_DIR) $(FUZZ_SECONDS)

fuzz: build
	bash scripts/run-fuzz.sh $(BUILD_DIR) $(or $(SECONDS),600)

bench: build
	bash bench/run.sh $(BUILD_DIR)

sanitize:
	$(MAKE) BUILD_DIR=build-asan CMAKE_FLAGS=-DQUEEN_SANITIZE=ON test

clean:
	rm -rf $(BUILD_DIR) build-asan
