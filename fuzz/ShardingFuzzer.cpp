//===- ShardingFuzzer.cpp - Partitioning annotated steps ------------------===//
//
// Input: bytes that pick a grid (1 to 3 axes, sizes among 0, 1, 2, 3, 4,
// 2^32 and 2^62), a tensor (rank 1 to 3, extents among 0, 1, 2, 3, 16, 32,
// 48, 64), the grid axes that split each of its dimensions (any axis number
// up to 3, so axes outside the grid and repeated axes occur) and what the
// step does with it (an elementwise op, a reduction, an MXFP4 and an NVFP4
// quantize round trip, a contraction of its last dimension with a weight). The
// step is written as text, parsed and partitioned by fp4train-partition and by
// shard-partition after sharding-propagation, as fp4-opt runs them. A crash, a
// sanitizer report, a failure without an error, or a partition that succeeds
// with shards that do not tile the tensor exactly (a shard extent times the
// number of shards other than the extent: rows dropped or invented) is a
// finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "fp4train/ParseModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4train::fuzz;

namespace {

/// The input's bytes, one choice at a time; zeros past its end.
class Choices {
public:
  Choices(const uint8_t *data, size_t size) : data(data), size(size) {}
  template <typename T, size_t N> T pick(const T (&options)[N]) {
    return options[next() % N];
  }
  unsigned below(unsigned n) { return next() % n; }

private:
  uint8_t next() { return position < size ? data[position++] : 0; }
  const uint8_t *data;
  size_t size;
  size_t position = 0;
};

constexpr int64_t kGridSizes[] = {
    0, 1, 2, 3, 4, int64_t(1) << 32, int64_t(1) << 62};
constexpr int64_t kExtents[] = {0, 1, 2, 3, 16, 32, 48, 64};

enum class Body { Add, Reduce, MXFP4, NVFP4, Matmul };
constexpr Body kBodies[] = {Body::Add, Body::Reduce, Body::MXFP4, Body::NVFP4,
                            Body::Matmul};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t extent : shape)
    text += std::to_string(extent) + "x";
  return text;
}

std::string tensorText(const std::vector<int64_t> &shape) {
  return "tensor<" + shapeText(shape) + "f32>";
}

/// The step: `@step(%x)` with `%x` annotated by `axes` on `@grid`, and
/// `body` applied to it.
std::string writeStep(const std::vector<int64_t> &grid,
                      const std::vector<int64_t> &shape,
                      const std::vector<std::vector<int>> &axes, Body body) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string gridShape = shapeText(grid);
  gridShape.pop_back();
  os << "shard.grid @grid(shape = " << gridShape << ")\n";
  std::string x = tensorText(shape);
  std::string split;
  for (const std::vector<int> &dim : axes)
    split += "[" +
             llvm::join(
                 llvm::map_range(dim, [](int a) { return std::to_string(a); }),
                 ", ") +
             "], ";
  split = split.empty() ? "[]" : split.substr(0, split.size() - 2);
  int64_t rank = shape.size(), last = shape.back();
  std::string result = x;
  std::string args = "%x: " + x;
  if (body == Body::Reduce)
    result = tensorText(std::vector<int64_t>(shape.begin(), shape.end() - 1));
  if (body == Body::Matmul) {
    args += ", %w: tensor<" + std::to_string(last) + "x16xf32>";
    std::vector<int64_t> out = shape;
    out.back() = 16;
    result = tensorText(out);
  }
  os << "func.func @step(" << args << ") -> " << result << " {\n";
  os << "  %s = shard.sharding @grid split_axes = [" << split
     << "] : !shard.sharding\n";
  os << "  %x0 = shard.shard %x to %s annotate_for_users : " << x << "\n";
  auto scaled = [&](const char *element, const char *block, const char *scale,
                    bool global) {
    std::string blocks = "1, ";
    for (int64_t d = 1; d + 1 < rank; ++d)
      blocks += "1, ";
    return "!fp4train.scaled<" + shapeText(shape) + element + ", block = [" +
           (rank == 1 ? std::string() : blocks) + block +
           "], scale = " + scale + (global ? ", global>" : ">");
  };
  switch (body) {
  case Body::Add:
    os << "  %e = tensor.empty() : " << x << "\n"
       << "  %r = linalg.add ins(%x0, %x0 : " << x << ", " << x
       << ") outs(%e : " << x << ") -> " << x << "\n";
    break;
  case Body::Reduce:
    os << "  %zero = arith.constant 0.0 : f32\n"
       << "  %e = tensor.empty() : " << result << "\n"
       << "  %z = linalg.fill ins(%zero : f32) outs(%e : " << result << ") -> "
       << result << "\n"
       << "  %r = linalg.reduce ins(%x0 : " << x << ") outs(%z : " << result
       << ") dimensions = [" << rank - 1 << "]\n"
       << "    (%in: f32, %acc: f32) {\n"
       << "      %sum = arith.addf %in, %acc : f32\n"
       << "      linalg.yield %sum : f32\n"
       << "    }\n";
    break;
  case Body::MXFP4:
  case Body::NVFP4: {
    std::string type = body == Body::MXFP4
                           ? scaled("f4E2M1FN", "32", "f8E8M0FNU", false)
                           : scaled("f4E2M1FN", "16", "f8E4M3FN", true);
    os << "  %q = fp4train.quantize %x0 : " << x << " -> " << type << "\n"
       << "  %r = fp4train.dequantize %q : " << type << " -> " << x << "\n";
    break;
  }
  case Body::Matmul: {
    std::string w = "tensor<" + std::to_string(last) + "x16xf32>";
    os << "  %zero = arith.constant 0.0 : f32\n"
       << "  %e = tensor.empty() : " << result << "\n"
       << "  %z = linalg.fill ins(%zero : f32) outs(%e : " << result << ") -> "
       << result << "\n";
    // x[..., k] * w[k, n] summed over k, for a tensor of any rank: loops
    // (d0, ..., n, k).
    std::string dims, outer;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      dims += "d" + std::to_string(d) + ", ";
      outer += "d" + std::to_string(d) + ", ";
    }
    dims += "n, k";
    os << "  %r = linalg.generic {indexing_maps = [affine_map<(" << dims
       << ") -> (" << outer << "k)>, affine_map<(" << dims
       << ") -> (k, n)>, affine_map<(" << dims << ") -> (" << outer
       << "n)>], iterator_types = [";
    for (int64_t d = 0; d < rank; ++d)
      os << "\"parallel\", ";
    os << "\"reduction\"]} ins(%x0, %w : " << x << ", " << w
       << ") outs(%z : " << result << ") {\n"
       << "  ^bb0(%a: f32, %b: f32, %acc: f32):\n"
       << "    %p = arith.mulf %a, %b : f32\n"
       << "    %t = arith.addf %acc, %p : f32\n"
       << "    linalg.yield %t : f32\n"
       << "  } -> " << result << "\n";
    break;
  }
  }
  os << "  return %r : " << result << "\n}\n";
  return text;
}

/// Aborts unless every dimension of the partitioned argument `local` times
/// the shards `axes` cut it into is the whole extent.
void checkTiling(const std::vector<int64_t> &grid,
                 const std::vector<int64_t> &shape,
                 const std::vector<std::vector<int>> &axes,
                 RankedTensorType local, llvm::StringRef text) {
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    // The partition succeeded, so every axis is one of the grid's.
    __int128 shards = 1;
    if (dim < axes.size())
      for (int axis : axes[dim])
        shards *= grid[axis];
    if (__int128(local.getDimSize(dim)) * shards != shape[dim]) {
      std::fprintf(stderr,
                   "fuzzer finding: dimension %zu of extent %lld became "
                   "shards of %lld\n%s",
                   dim, (long long)shape[dim], (long long)local.getDimSize(dim),
                   text.str().c_str());
      std::abort();
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Choices choices(data, size);
  std::vector<int64_t> grid(1 + choices.below(3));
  for (int64_t &extent : grid)
    extent = choices.pick(kGridSizes);
  std::vector<int64_t> shape(1 + choices.below(3));
  for (int64_t &extent : shape)
    extent = choices.pick(kExtents);
  std::vector<std::vector<int>> axes(choices.below(shape.size() + 1));
  for (std::vector<int> &dim : axes)
    for (unsigned n = choices.below(3); n > 0; --n)
      dim.push_back(int(choices.below(4)));
  Body body = choices.pick(kBodies);
  bool upstreamPipeline = choices.below(2);
  std::string text = writeStep(grid, shape, axes, body);

  FuzzContext context;
  OwningOpRef<ModuleOp> module =
      mlir::fp4train::parseModule(text, "<fuzz>", &context.get());
  checkFailureReported(!module, context, "parsing");
  if (!module)
    return 0;
  llvm::StringRef pipeline =
      upstreamPipeline ? "func.func(sharding-propagation,shard-partition)"
                       : "fp4train-partition";
  if (!runPipeline(context, *module, pipeline))
    return 0;
  auto step = module->lookupSymbol<func::FuncOp>("step");
  auto local = dyn_cast<RankedTensorType>(step.getArgumentTypes().front());
  if (local)
    checkTiling(grid, shape, axes, local, text);
  return 0;
}
