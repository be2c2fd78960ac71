//===- FP4TrainModule.cpp - The fp4train._fp4train extension --------------===//
//
// pybind11 bindings over the fp4train C API (libFP4TrainCAPI.so); the
// pure-Python modules of the package build the public surface on top. MLIR
// never sees a C++ exception: every C API call reports failure through its
// return value and callback, and the error is raised after it returns. The
// GIL is released around pass runs, numerics and JIT calls.
//
//===----------------------------------------------------------------------===//

#include "fp4train-c/Dialects.h"
#include "fp4train-c/ExecutionEngine.h"
#include "fp4train-c/Numerics.h"
#include "fp4train-c/Passes.h"

#include "mlir-c/IR.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace py = pybind11;

namespace {

/// Raised as fp4train.Error, with the diagnostics text as its message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Collects the text a C API callback passes.
struct Collector {
  std::string text;
  static void append(MlirStringRef part, void *userData) {
    static_cast<Collector *>(userData)->text.append(part.data, part.length);
  }
  [[noreturn]] void raise(const char *fallback) const {
    throw Error(text.empty() ? fallback : text);
  }
};

MlirStringRef toRef(const std::string &text) {
  return mlirStringRefCreate(text.data(), text.size());
}

class Context {
public:
  Context() {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    fp4trainRegisterRequiredDialects(registry);
    context =
        mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/true);
    mlirDialectRegistryDestroy(registry);
  }
  ~Context() { mlirContextDestroy(context); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  MlirContext get() const { return context; }

private:
  MlirContext context;
};

class Module {
public:
  Module(std::shared_ptr<Context> context, MlirModule module)
      : context(std::move(context)), module(module) {}
  ~Module() { mlirModuleDestroy(module); }
  // A copy would destroy the module twice.
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  MlirModule get() const { return module; }

private:
  // Declared first: destroyed after the module.
  std::shared_ptr<Context> context;
  MlirModule module;
};

std::unique_ptr<Module> parse(std::shared_ptr<Context> context,
                              const std::string &text) {
  Collector errors;
  MlirModule module;
  {
    py::gil_scoped_release release;
    module = fp4trainModuleCreateParse(context->get(), toRef(text),
                                       Collector::append, &errors);
  }
  if (mlirModuleIsNull(module))
    errors.raise("cannot parse the module");
  return std::make_unique<Module>(std::move(context), module);
}

void runPipeline(Module &module, const std::string &pipeline) {
  Collector errors;
  MlirLogicalResult result;
  {
    py::gil_scoped_release release;
    result = fp4trainModuleRunPipeline(module.get(), toRef(pipeline),
                                       Collector::append, &errors);
  }
  if (mlirLogicalResultIsFailure(result))
    errors.raise("the pass pipeline failed");
}

std::string print(const Module &module) {
  Collector text;
  mlirOperationPrint(mlirModuleGetOperation(module.get()), Collector::append,
                     &text);
  return text.text;
}

std::string printText(const Module &module, bool locations) {
  if (!locations)
    return print(module);
  Collector text;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsEnableDebugInfo(flags, /*enable=*/true,
                                     /*prettyForm=*/false);
  mlirOperationPrintWithFlags(mlirModuleGetOperation(module.get()), flags,
                              Collector::append, &text);
  mlirOpPrintingFlagsDestroy(flags);
  return text.text;
}

std::string roleReport(const Module &module, const std::string &layout) {
  Collector report, errors;
  MlirLogicalResult result;
  {
    py::gil_scoped_release release;
    result = fp4trainModuleGetRoleReport(module.get(), toRef(layout),
                                         Collector::append, &report,
                                         Collector::append, &errors);
  }
  if (mlirLogicalResultIsFailure(result))
    errors.raise("the role analysis failed");
  return report.text;
}

//===----------------------------------------------------------------------===//
// Numerics
//===----------------------------------------------------------------------===//

/// What a conversion to T takes, for error messages.
template <typename T> const char *describeExpected() {
  if constexpr (std::is_same_v<T, bool>)
    return "a bool";
  else if constexpr (std::is_same_v<T, std::string>)
    return "a str";
  else if constexpr (std::is_floating_point_v<T>)
    return "a float within the range of float32";
  else if constexpr (std::is_unsigned_v<T>)
    return "an int in [0, 2**64)";
  else
    return "an int in [-2**63, 2**63)";
}

/// `value` as T; a value of the wrong kind or out of T's range is a
/// TypeError naming `what` (an argument or option) and what it takes, not
/// pybind11's "Unable to cast Python instance to C++ type".
template <typename T> T convert(py::handle value, const std::string &what) {
  try {
    return py::cast<T>(value);
  } catch (const py::cast_error &) {
    std::string shown = py::repr(value).cast<std::string>();
    if (shown.size() > 40)
      shown = shown.substr(0, 37) + "...";
    throw py::type_error(what + " must be " + describeExpected<T>() + ", got " +
                         shown);
  }
}

/// FP4TrainQuantOptions built from the dict the Python layer passes (keys
/// named as fp4-quant's options), with the strings it points to.
struct QuantOptions {
  explicit QuantOptions(const py::dict &dict) {
    fp4trainQuantOptionsInit(&options);
    auto text = [&](const char *key, std::string &storage, const char *&field) {
      if (!dict.contains(key))
        return;
      storage =
          convert<std::string>(dict[key], "option  + std::string(key) + ");
      field = storage.c_str();
    };
    text("format", format, options.format);
    text("scale-mode", scaleMode, options.scaleMode);
    text("block", block, options.block);
    text("rounding", rounding, options.rounding);
    text("signs", signs, options.signs);
    if (dict.contains("axis"))
      options.axis = convert<int64_t>(dict["axis"], "option 'axis'");
    if (dict.contains("seed")) {
      options.hasSeed = true;
      options.seed = convert<uint64_t>(dict["seed"], "option 'seed'");
    }
    if (dict.contains("amax")) {
      options.hasAmax = true;
      options.amax = convert<float>(dict["amax"], "option 'amax'");
    }
    if (dict.contains("hadamard"))
      options.hadamard =
          convert<int64_t>(dict["hadamard"], "option 'hadamard'");
    if (dict.contains("step")) {
      options.hasStep = true;
      options.step = convert<uint64_t>(dict["step"], "option 'step'");
    }
    if (dict.contains("unrotate"))
      options.unrotate = convert<bool>(dict["unrotate"], "option 'unrotate'");
  }
  QuantOptions(const QuantOptions &) = delete;
  QuantOptions &operator=(const QuantOptions &) = delete;

  FP4TrainQuantOptions options;
  std::string format, scaleMode, block, rounding, signs;
};

using FloatArray = py::array_t<float, py::array::c_style>;
using IntArray = py::array_t<int32_t, py::array::c_style>;
using ByteArray = py::array_t<uint8_t, py::array::c_style>;

std::vector<int64_t> getShape(const py::array &array) {
  return std::vector<int64_t>(array.shape(), array.shape() + array.ndim());
}

/// Quantizes `x` (float32, C-contiguous: checked by the caller, and
/// `noconvert` makes sure nothing is copied); returns (codes, scales,
/// [amax, S_dec]).
py::tuple quantize(const FloatArray &x, const py::dict &dict) {
  QuantOptions options(dict);
  std::vector<int64_t> shape = getShape(x);
  std::vector<int64_t> scalesShape(shape.size());
  Collector errors;
  if (mlirLogicalResultIsFailure(fp4trainQuantizeGetScalesShape(
          &options.options, shape.size(), shape.data(), scalesShape.data(),
          Collector::append, &errors)))
    errors.raise("invalid quantization options");
  ByteArray codes(shape), scales(scalesShape);
  FloatArray global(std::vector<int64_t>{2});
  const float *data = x.data();
  uint8_t *codesData = codes.mutable_data(),
          *scalesData = scales.mutable_data();
  float *globalData = global.mutable_data();
  MlirLogicalResult result;
  {
    py::gil_scoped_release release;
    result =
        fp4trainQuantize(&options.options, shape.size(), shape.data(), data,
                         codesData, scalesData, globalData,
                         /*dequantized=*/nullptr, Collector::append, &errors);
  }
  if (mlirLogicalResultIsFailure(result))
    errors.raise("quantization failed");
  return py::make_tuple(codes, scales, global);
}

FloatArray dequantize(const ByteArray &codes, const ByteArray &scales,
                      float globalDecodeScale, const py::dict &dict) {
  QuantOptions options(dict);
  std::vector<int64_t> shape = getShape(codes);
  FloatArray out(shape);
  const uint8_t *codesData = codes.data(), *scalesData = scales.data();
  float *outData = out.mutable_data();
  Collector errors;
  MlirLogicalResult result;
  {
    py::gil_scoped_release release;
    result = fp4trainDequantize(&options.options, shape.size(), shape.data(),
                                codesData, scalesData, globalDecodeScale,
                                outData, Collector::append, &errors);
  }
  if (mlirLogicalResultIsFailure(result))
    errors.raise("dequantization failed");
  return out;
}

//===----------------------------------------------------------------------===//
// JIT
//===----------------------------------------------------------------------===//

class Jit {
public:
  Jit(const Module &module, const std::string &function,
      const std::string &pipeline, bool checkIndices) {
    Collector errors;
    {
      py::gil_scoped_release release;
      FP4TrainJitOptions options = fp4trainJitOptionsGetDefault();
      options.checkIndices = checkIndices;
      jit = fp4trainJitCreateWithOptions(module.get(), toRef(function),
                                         toRef(pipeline), options,
                                         Collector::append, &errors);
    }
    if (fp4trainJitIsNull(jit))
      errors.raise("compilation failed");
  }
  ~Jit() { fp4trainJitDestroy(jit); }
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  /// (kind, shape, element bytes, is_param) per argument or result; kind is
  /// "tensor", "f32" or "i64".
  py::list describe(bool results) const {
    py::list list;
    intptr_t count = results ? fp4trainJitGetNumResults(jit)
                             : fp4trainJitGetNumArguments(jit);
    for (intptr_t i = 0; i < count; ++i) {
      FP4TrainJitValue value = results ? fp4trainJitGetResult(jit, i)
                                       : fp4trainJitGetArgument(jit, i);
      const char *kind = value.kind == FP4TrainJitTensor ? "tensor"
                         : value.kind == FP4TrainJitF32  ? "f32"
                                                         : "i64";
      list.append(py::make_tuple(kind,
                                 py::tuple(py::cast(std::vector<int64_t>(
                                     value.shape, value.shape + value.rank))),
                                 value.elementBytes, value.isParam));
    }
    return list;
  }

  py::tuple call(const py::args &args) {
    intptr_t numArgs = fp4trainJitGetNumArguments(jit);
    if (intptr_t(args.size()) != numArgs)
      throw py::type_error("expected " + std::to_string(numArgs) +
                           " arguments, got " + std::to_string(args.size()));
    std::vector<const void *> pointers(numArgs);
    std::vector<float> floats(numArgs);
    std::vector<int64_t> ints(numArgs);
    for (intptr_t i = 0; i < numArgs; ++i) {
      FP4TrainJitValue value = fp4trainJitGetArgument(jit, i);
      std::string where = "argument " + std::to_string(i);
      if (value.kind == FP4TrainJitF32) {
        if (!py::isinstance<py::float_>(args[i]) &&
            !py::isinstance<py::int_>(args[i]))
          throw py::type_error(where + " must be a float");
        floats[i] = convert<float>(args[i], where);
        pointers[i] = &floats[i];
        continue;
      }
      if (value.kind == FP4TrainJitI64) {
        if (!py::isinstance<py::int_>(args[i]))
          throw py::type_error(where + " must be an int");
        ints[i] = convert<int64_t>(args[i], where);
        pointers[i] = &ints[i];
        continue;
      }
      pointers[i] = checkTensor(args[i], value, where);
    }
    intptr_t numResults = fp4trainJitGetNumResults(jit);
    std::vector<py::array> outs;
    std::vector<void *> outPointers;
    for (intptr_t j = 0; j < numResults; ++j) {
      FP4TrainJitValue value = fp4trainJitGetResult(jit, j);
      std::vector<int64_t> shape(value.shape, value.shape + value.rank);
      py::array out = value.isInt32             ? py::array(IntArray(shape))
                      : value.elementBytes == 4 ? py::array(FloatArray(shape))
                                                : py::array(ByteArray(shape));
      outPointers.push_back(out.mutable_data());
      outs.push_back(std::move(out));
    }
    Collector errors;
    bool called;
    {
      py::gil_scoped_release release;
      called = mlirLogicalResultIsSuccess(
          fp4trainJitCall(jit, pointers.data(), outPointers.data(),
                          Collector::append, &errors));
    }
    if (!called)
      errors.raise("the call failed");
    py::tuple result(numResults);
    for (intptr_t j = 0; j < numResults; ++j)
      result[j] = outs[j];
    return result;
  }

private:
  /// The data of `object` if it is a C-contiguous array of the argument's
  /// dtype and shape.
  static const void *checkTensor(const py::handle &object,
                                 const FP4TrainJitValue &value,
                                 const std::string &where) {
    bool bytes = value.elementBytes == 1;
    const char *expected = bytes           ? "uint8 (or int8) codes"
                           : value.isInt32 ? "int32"
                                           : "float32";
    if (!py::isinstance<py::array>(object))
      throw py::type_error(where + " must be a numpy array of " + expected);
    auto array = py::reinterpret_borrow<py::array>(object);
    bool dtypeOk = bytes ? (array.dtype().is(py::dtype::of<uint8_t>()) ||
                            array.dtype().is(py::dtype::of<int8_t>()))
                   : value.isInt32 ? array.dtype().is(py::dtype::of<int32_t>())
                                   : array.dtype().is(py::dtype::of<float>());
    if (!dtypeOk)
      throw py::type_error(where + " must be " + expected + ", got " +
                           py::str(array.dtype()).cast<std::string>());
    if (!(array.flags() & py::array::c_style))
      throw py::type_error(where + " must be C-contiguous");
    std::vector<int64_t> shape = getShape(array);
    if (shape != std::vector<int64_t>(value.shape, value.shape + value.rank)) {
      std::string want = "(", got = "(";
      for (intptr_t d = 0; d < value.rank; ++d)
        want +=
            std::to_string(value.shape[d]) + (d + 1 < value.rank ? ", " : "");
      for (size_t d = 0; d < shape.size(); ++d)
        got += std::to_string(shape[d]) + (d + 1 < shape.size() ? ", " : "");
      throw Error(where + " has shape " + got + ") but the function takes " +
                  want + ")");
    }
    return array.data();
  }

  FP4TrainJit jit;
};

} // namespace

PYBIND11_MODULE(_fp4train, m) {
  m.doc() = "Native core of the fp4train package (over libFP4TrainCAPI.so); "
            "use the fp4train package, not this module.";
  py::register_exception<Error>(m, "Error", PyExc_Exception);
  fp4trainRegisterPasses();

  py::class_<Context, std::shared_ptr<Context>>(
      m, "Context",
      "An MLIR context with the fp4train dialect and every dialect and "
      "interface a training graph and its lowerings need (what fp4-opt "
      "registers).")
      .def(py::init<>())
      .def("parse", &parse, py::arg("text"),
           "parse(text: str) -> Module\n\n"
           "Parses MLIR text (a module, or ops that make one) into a Module. "
           "Raises fp4train.Error with the parser's diagnostics "
           "(`<input>:line:col: error: ...`) when it does not parse.");

  py::class_<Module>(m, "Module",
                     "A parsed MLIR module, owned by Python; keeps its "
                     "Context alive. Not safe to use from two threads at "
                     "once.")
      .def("run_pipeline", &runPipeline, py::arg("pipeline"),
           "run_pipeline(pipeline: str) -> None\n\n"
           "Runs a textual pass pipeline on the module, in place. Takes what "
           "`fp4-opt --pass-pipeline` takes, with or without the "
           "`builtin.module(...)` wrapper, e.g. "
           "'fp4train-quantize-pipeline{recipe=nvfp4}'. Raises fp4train.Error "
           "with the diagnostics when the pipeline does not parse or a pass "
           "fails (the module may then be partially transformed). Releases "
           "the GIL while the passes run.")
      .def("__str__", &print,
           "The module as MLIR text (the custom assembly form).")
      .def("text", &printText, py::arg("locations") = false,
           "text(locations: bool = False) -> str\n\n"
           "The module as MLIR text; with `locations`, every op's location "
           "too (`loc(...)`: a front end's source lines), which fp4-opt and "
           "fp4-train then name in their diagnostics and reports.");

  m.def("_role_report", &roleReport, py::arg("module"),
        py::arg("weight_layout"),
        "The fp4train-annotate-roles report of a module as JSON text.");
  m.def("_quantize", &quantize, py::arg("x").noconvert(), py::arg("options"),
        "(codes, scales, [amax, S_dec]) of a float32 C-contiguous array.");
  m.def("_dequantize", &dequantize, py::arg("codes").noconvert(),
        py::arg("scales").noconvert(), py::arg("global_decode_scale"),
        py::arg("options"), "Decodes codes and scales to float32.");

  py::class_<Jit>(m, "_Jit", "A JIT-compiled function.")
      .def(py::init<const Module &, const std::string &, const std::string &,
                    bool>(),
           py::arg("module"), py::arg("function"), py::arg("pipeline"),
           py::arg("check_indices"))
      .def("arguments", [](const Jit &jit) { return jit.describe(false); })
      .def("results", [](const Jit &jit) { return jit.describe(true); })
      .def("__call__", &Jit::call);
}
