//===- JitFunction.cpp - JIT-compile and call one function ----------------===//

#include "fp4train/Runtime/JitFunction.h"
#include "fp4train/Numerics/ElementCount.h"

#include "fp4train/Dialect/FP4Train/IR/FP4TrainDialect.h"
#include "fp4train/Dialect/FP4Train/Transforms/Passes.h"
#include "fp4train/Runtime/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <limits>
#include <string>

using namespace mlir;
using namespace mlir::fp4train;

int64_t JitValue::getNumElements() const {
  // JitFunction::compile rejects the values whose count overflows.
  std::optional<int64_t> count = ::fp4train::checkedNumElements(shape);
  assert(count && "element count overflow in a JIT signature");
  return *count;
}

/// Whether the host can allocate a buffer for `value`: its element count and
/// byte size fit int64 (a wrapped count would make the host allocate a few
/// elements for a tensor the JIT code then reads in full).
static bool isAddressable(const JitValue &value) {
  std::optional<int64_t> count = ::fp4train::checkedNumElements(value.shape);
  return count &&
         *count <= std::numeric_limits<int64_t>::max() / value.elementBytes;
}

/// The host view of `type`, or nothing when the host cannot pass it.
static std::optional<JitValue> getJitValue(Type type) {
  if (type.isF32())
    return JitValue{JitValue::Kind::F32, {}};
  if (type.isInteger(64) || type.isIndex())
    return JitValue{JitValue::Kind::I64, {}};
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  Type element = tensor.getElementType();
  JitValue value{
      JitValue::Kind::Tensor,
      std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end())};
  if (element.isF32())
    return value;
  if (element.isInteger(32)) {
    value.isInt32 = true;
    return value;
  }
  if (element.isInteger(8) || isa<Float4E2M1FNType, Float8E4M3FNType,
                                  Float8E5M2Type, Float8E8M0FNUType>(element)) {
    value.elementBytes = 1;
    return value;
  }
  return std::nullopt;
}

/// Runs `fn`, turning the diagnostics it reports into one error message.
static llvm::Error withDiagnostics(MLIRContext *context, llvm::StringRef what,
                                   llvm::function_ref<LogicalResult()> fn) {
  std::string message;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
    if (message.empty() &&
        diagnostic.getSeverity() == DiagnosticSeverity::Error)
      message = diagnostic.str();
    return success();
  });
  if (succeeded(fn()))
    return llvm::Error::success();
  return llvm::createStringError(what + ": " +
                                 (message.empty() ? "failed" : message));
}

/// Gives `values` the shapes of `shardTypes`, the types of one process's
/// shards of them; false where the numbers or a value's kind differ.
static bool takeShardShapes(llvm::MutableArrayRef<JitValue> values,
                            TypeRange shardTypes) {
  if (values.size() != shardTypes.size())
    return false;
  for (auto [value, shardType] : llvm::zip_equal(values, shardTypes)) {
    std::optional<JitValue> local = getJitValue(shardType);
    if (!local || local->kind != value.kind)
      return false;
    value.shape = local->shape;
  }
  return true;
}

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::compile(ModuleOp module, llvm::StringRef name,
                     llvm::function_ref<void(OpPassManager &)> buildPipeline,
                     const JitOptions &jitOptions) {
  static bool targetInitialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targetInitialized;

  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function || function.isExternal())
    return llvm::createStringError("no function @" + name.str() +
                                   " with a body in the module");
  std::unique_ptr<JitFunction> result(new JitFunction());
  result->name = name.str();
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    std::optional<JitValue> value = getJitValue(type);
    if (!value)
      return llvm::createStringError(
          "@" + name.str() + " argument " + std::to_string(index) +
          " has a type the host cannot pass (static f32, i32 or code tensors, "
          "f32 and i64 scalars)");
    if (!isAddressable(*value))
      return llvm::createStringError(
          "@" + name.str() + " argument " + std::to_string(index) +
          " has more elements than the host can address");
    value->isParam = bool(function.getArgAttr(index, "fp4train.param"));
    result->arguments.push_back(*value);
  }
  for (auto [index, type] : llvm::enumerate(function.getResultTypes())) {
    std::optional<JitValue> value = getJitValue(type);
    if (!value || value->kind != JitValue::Kind::Tensor)
      return llvm::createStringError(
          "@" + name.str() + " result " + std::to_string(index) +
          " is not a static f32, i32 or code tensor");
    if (!isAddressable(*value))
      return llvm::createStringError(
          "@" + name.str() + " result " + std::to_string(index) +
          " has more elements than the host can address");
    result->results.push_back(*value);
  }
  function.setPublic();
  function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(module.getContext()));

  MLIRContext *context = module.getContext();
  if (jitOptions.checkIndices) {
    // Before the pipeline, which buildPipeline may replace as a whole.
    PassManager checks(context);
    checks.addPass(createFP4TrainCheckIndices());
    if (llvm::Error error =
            withDiagnostics(context, "checking the indices of @" + name.str(),
                            [&] { return checks.run(module); }))
      return std::move(error);
    if (auto sites = module->getAttrOfType<ArrayAttr>(
            FP4TrainDialect::kIndexChecksAttrName))
      for (auto site : sites.getAsRange<StringAttr>())
        result->indexSites.push_back(site.str());
  }
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context->appendDialectRegistry(registry);
  PassManager pm(context);
  buildPipeline(pm);
  if (llvm::Error error = withDiagnostics(context, "compiling @" + name.str(),
                                          [&] { return pm.run(module); }))
    return std::move(error);
  // A partitioned step (docs/sharding.md) is called with one process's
  // shards: the partition recorded their types.
  if (Operation *lowered = module.lookupSymbol(name))
    if (auto process = lowered->getAttrOfType<TypeAttr>(
            FP4TrainDialect::kProcessTypeAttrName)) {
      auto type = cast<FunctionType>(process.getValue());
      if (!takeShardShapes(result->arguments, type.getInputs()) ||
          !takeShardShapes(result->results, type.getResults()))
        return llvm::createStringError(
            "compiling @" + name.str() +
            ": its partition changed the kind or number of its arguments or "
            "results");
    }
  // call() passes results as out-parameters; a function that still returns
  // values would read garbage (or crash), so reject it here.
  if (!result->results.empty()) {
    auto lowered = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    if (!lowered ||
        !isa<LLVM::LLVMVoidType>(lowered.getFunctionType().getReturnType()))
      return llvm::createStringError(
          "compiling @" + name.str() +
          ": the pipeline must lower it to an llvm.func returning results "
          "through out-parameters (fp4train-cpu-pipeline{out-params=true})");
  }

  // The lowered code is left unoptimized by the conversion passes; LLVM's
  // -O2 pipeline makes the non-GEMM parts of a step (loops over
  // activations) several times faster, which whole training runs feel.
  auto optimize = makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0,
                                            /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return llvm::createStringError("JIT of @" + name.str() + ": " +
                                   llvm::toString(engine.takeError()));
  result->engine = std::move(*engine);
  result->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const ::fp4train::runtime::Symbol &symbol :
         ::fp4train::runtime::getSymbols())
      symbols[interner(symbol.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(symbol.address),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  auto entry = result->engine->lookupPacked("_mlir_ciface_" + name.str());
  if (!entry)
    return llvm::createStringError("JIT of @" + name.str() + ": " +
                                   llvm::toString(entry.takeError()));
  result->entry = *entry;
  return result;
}

JitFunction::~JitFunction() = default;

llvm::Error JitFunction::call(llvm::ArrayRef<const void *> args,
                              llvm::ArrayRef<void *> outs) {
  assert(args.size() == arguments.size() && outs.size() == results.size() &&
         "one buffer per argument and result");
  // A ranked memref descriptor {allocated, aligned, offset, sizes, strides}
  // per tensor; the C interface takes a pointer to it, and the packed call a
  // pointer to that pointer.
  size_t numTensors = outs.size();
  for (const JitValue &value : arguments)
    numTensors += value.kind == JitValue::Kind::Tensor;
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(numTensors);
  std::vector<void *> pointers(numTensors);
  std::vector<void *> packed;
  auto addTensor = [&](const JitValue &value, const void *data) {
    std::vector<int64_t> &d = descriptors.emplace_back();
    auto address = int64_t(reinterpret_cast<intptr_t>(data));
    d = {address, address, 0};
    d.insert(d.end(), value.shape.begin(), value.shape.end());
    std::vector<int64_t> strides(value.shape.size(), 1);
    for (int64_t i = int64_t(strides.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * value.shape[i + 1];
    d.insert(d.end(), strides.begin(), strides.end());
    void *&pointer = pointers[descriptors.size() - 1];
    pointer = d.data();
    packed.push_back(&pointer);
  };
  for (auto [value, arg] : llvm::zip_equal(arguments, args)) {
    if (value.kind == JitValue::Kind::Tensor)
      addTensor(value, arg);
    else
      packed.push_back(const_cast<void *>(arg));
  }
  for (auto [value, out] : llvm::zip_equal(results, outs))
    addTensor(value, out);
  // A failure of an earlier call on this thread was taken by that call.
  entry(packed.data());
  std::optional<::fp4train::runtime::IndexError> failed =
      ::fp4train::runtime::takeIndexError();
  if (!failed)
    return llvm::Error::success();
  std::string site =
      failed->site >= 0 && size_t(failed->site) < indexSites.size()
          ? indexSites[failed->site]
          : "an access";
  if (failed->dim == -2)
    return llvm::createStringError("@" + name + ": the check " + site +
                                   " failed");
  return llvm::createStringError(
      "@" + name + ": index " + std::to_string(failed->index) +
      " is out of bounds of dimension " + std::to_string(failed->dim) +
      " (size " + std::to_string(failed->size) + ") in " + site);
}
