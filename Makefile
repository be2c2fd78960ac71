# fp4train: the two entry points of the README, plus bench and clean.
#
#   make demo   set up if needed, build, run the main job on the bundled example
#   make test   set up if needed, build, run every test (lit + gtest) and
#               the style check
#   make format clang-format every C/C++ source (.clang-format, LLVM style)
#   make bench  build and run the benchmarks (not part of `make test`)
#   make test-sanitize  the whole suite under ASan + UBSan (build-sanitize/)
#   make fuzz   the fuzzers of fuzz/ for FUZZ_SECONDS each, in build-sanitize/
#   make gpu-check  the folder that checks the NVIDIA kernels on a real GPU

BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
LLVM_BIN := /usr/lib/llvm-22/bin

CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_C_COMPILER=$(LLVM_BIN)/clang -DCMAKE_CXX_COMPILER=$(LLVM_BIN)/clang++ \
  -DLLVM_USE_LINKER=lld -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: all setup configure build test format format-check test-sanitize fuzz \
  gpu-check demo bench clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build format-check
	cmake --build $(BUILD) --target check-fp4train

format: setup
	@bash scripts/format.sh

format-check: setup
	@bash scripts/format.sh --check

# ASan + UBSan over our code (LLVM/MLIR stay Debian's uninstrumented
# archives), aborting on the first report. HandleLLVMOptions adds the flags;
# LLVM_UBSAN_FLAGS is defined by LLVM's own top-level CMakeLists only, so it
# is spelled here: vptr and function need RTTI, which LLVM is built without.
SANITIZE_BUILD ?= build-sanitize
# LLVM_USE_SANITIZE_COVERAGE adds libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) so the same build links the fuzzers of fuzz/;
# the sanitizer runtimes supply its hooks to everything else.
SANITIZE_FLAGS := -DLLVM_USE_SANITIZER="Address;Undefined" \
  -DLLVM_USE_SANITIZE_COVERAGE=On \
  -DLLVM_UBSAN_FLAGS="-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all"
# Run-time options:
# - allow_user_poisoning=0 (needed): LLVM's headers poison BumpPtrAllocator
#   slabs from our instrumented inline code, but the uninstrumented library
#   code that hands the memory out never unpoisons it, so every MLIR
#   SmallVector in an allocator slab reads as use-after-poison.
# - print_stacktrace=1 (UBSan): where the undefined behaviour happened.
# Leak detection stays on: the suite is leak-clean. No suppressions.
SANITIZE_ENV := ASAN_OPTIONS=allow_user_poisoning=0 \
  UBSAN_OPTIONS=print_stacktrace=1

test-sanitize: setup
	cmake -S . -B $(SANITIZE_BUILD) $(CMAKE_FLAGS) $(SANITIZE_FLAGS)
	$(SANITIZE_ENV) cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target check-fp4train

# Seconds per fuzzer, and (if set) the most seeds each replays; .ci/run
# passes a short smoke budget and a sample of the seeds.
FUZZ_SECONDS ?= 300
FUZZ_SEED_LIMIT ?=

fuzz: setup
	cmake -S . -B $(SANITIZE_BUILD) $(CMAKE_FLAGS) $(SANITIZE_FLAGS)
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target fp4train-fuzzers
	$(SANITIZE_ENV) FUZZ_SEED_LIMIT=$(FUZZ_SEED_LIMIT) \
	  bash scripts/fuzz.sh $(SANITIZE_BUILD) $(FUZZ_SECONDS)

# The chip the folder of make gpu-check is built for: sm_90a, the
# H100/H200 most often at hand (sm_120a and sm_100a work the same way).
GPU_CHIP ?= sm_90a

gpu-check: configure
	cmake --build $(BUILD) -j $(JOBS) --target fp4-gpu-prepare fp4-gpu-run
	bash scripts/gpu_check.sh $(BUILD) $(GPU_CHIP)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target fp4train-benchmarks
	@bash benchmarks/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
