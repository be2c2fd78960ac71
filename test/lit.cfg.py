# -*- Python -*-
# lit configuration for the fp4train regression tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FP4TRAIN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp4train_obj_root, "test")
# Inputs/ hold data, not tests. Unit/ is a suite of its own (its own
# lit.site.cfg.py, GoogleTest format) that lit enters from here.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%fp4train_src", config.fp4train_src_root))
config.substitutions.append(("%fp4train_obj", config.fp4train_obj_root))
config.substitutions.append(("%{c_compiler}", config.c_compiler))
config.substitutions.append(("%{cxx_compiler}", config.cxx_compiler))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

tool_dirs = [config.fp4train_tools_dir, config.llvm_tools_dir]
tools = [
    "fp4-opt",
    "fp4-quant",
    "fp4-train",
    "fp4train-capi-test",
    "fp4-opt-fuzzer",
    "fp4-option-fuzzer",
    "fp4-quant-fuzzer",
    "fp4-case-file-fuzzer",
    "fp4-task-fuzzer",
    "fp4-capi-fuzzer",
    "fp4-sharding-fuzzer",
    "mlir-opt",
    ToolSubst("fp4-gpu-prepare", unresolved="ignore"),
    ToolSubst("fp4-gpu-run", unresolved="ignore"),
    ToolSubst("%python", config.python_executable or "python3", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Optional CUDA assembler: tests that need it say `REQUIRES: ptxas` and are
# skipped (never failed) on machines without it.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None
)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    # The toolkit root ptxas lives in (<root>/bin/ptxas), for format=bin.
    config.substitutions.append(
        ("%{ptxas_toolkit}", os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))))

# MPI (MPICH, scripts/setup.sh) for sharded steps: tests that launch
# processes say `REQUIRES: mpi`. %mpich_lib is the library lli loads into the
# JIT; %mlir_c_runner_utils the printing helpers of vector.print.
import ctypes.util
mpiexec = shutil.which("mpiexec.hydra") or shutil.which("mpiexec")
mpich_lib = ctypes.util.find_library("mpich")
if mpiexec and mpich_lib:
    config.available_features.add("mpi")
    if config.llvm_use_sanitizer:
        # UCX, which MPICH uses, patches mmap in place when it loads, over
        # ASan's interceptor (a wild jump in MPI_Init): its hooks stay off.
        # The communicators a step caches for the life of the process
        # ([SH6], docs/sharding.md) and MPICH's and UCX's own allocations
        # outlive MPI_Finalize, which LeakSanitizer would report: the
        # processes mpiexec launches run without it; every other run of an
        # instrumented tool keeps it.
        config.environment["UCX_MEM_MMAP_HOOK_MODE"] = "none"
        asan = config.environment.get("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", ""))
        mpiexec = "env ASAN_OPTIONS=%s %s" % (
            ":".join(filter(None, [asan, "detect_leaks=0"])), mpiexec)
    config.substitutions.append(("%mpiexec", mpiexec))
    for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"):
        if os.path.exists(os.path.join(directory, mpich_lib)):
            mpich_lib = os.path.join(directory, mpich_lib)
            break
    config.substitutions.append(("%mpich_lib", mpich_lib))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                  "libmlir_c_runner_utils" + config.llvm_shlib_ext)))

# The device runner is built where cuda.h is (tools/fp4-gpu-run); a CUDA
# device is there when the driver loads and reports one. Tests that run
# kernels on it say `REQUIRES: cuda-device` and skip everywhere else.
if os.path.exists(os.path.join(config.fp4train_tools_dir, "fp4-gpu-run")):
    config.available_features.add("gpu-runner")
def _has_cuda_device():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False
if _has_cuda_device():
    config.available_features.add("cuda-device")

# An ASan/UBSan build (make test-sanitize): code that must be loaded into an
# uninstrumented host (the Python extension into /usr/bin/python3) or linked
# by an uninstrumented outside project cannot run; those tests say
# `UNSUPPORTED: sanitized` and run in the normal build.
if config.llvm_use_sanitizer:
    config.available_features.add("sanitized")

# The framework front ends' environment (scripts/setup.sh makes .venv): tests
# of fp4train.torch and fp4train.jax say `REQUIRES: frontends` and run
# %frontend_python.
if config.frontend_python and os.access(config.frontend_python, os.X_OK):
    config.available_features.add("frontends")
    config.substitutions.append(("%frontend_python", config.frontend_python))

if config.enable_execution_engine:
    config.available_features.add("execution-engine")
