# fp4train: the two entry points of the README, plus bench and clean.
#
#   make demo   set up if needed, build, run the main job on the bundled example
#   make test   set up if needed, build, run every test (lit + gtest)
#   make bench  build and run the benchmarks (not part of `make test`)

BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
LLVM_BIN := /usr/lib/llvm-22/bin

CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_C_COMPILER=$(LLVM_BIN)/clang -DCMAKE_CXX_COMPILER=$(LLVM_BIN)/clang++ \
  -DLLVM_USE_LINKER=lld -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: all setup configure build test demo bench clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cmake --build $(BUILD) --target check-fp4train

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target fp4train-benchmarks
	@bash benchmarks/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
