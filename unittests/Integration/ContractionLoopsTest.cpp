//===- ContractionLoopsTest.cpp - Interchanged contractions, same bits ----===//
//
// fp4train-interchange-contractions reorders the loops of f32 contractions
// so that LLVM vectorizes them, and the JIT optimizes for the host's vector
// units. Neither may change a bit: the emulator, the equivalence tests and
// the loss-curve comparisons check CPU results bit for bit. Each test JITs a
// contraction through the CPU lowering and compares every output with a
// reference that runs the original loop nest in C++ (compiled with
// -ffp-contract=off): every point of the iteration space in lexicographic
// order, `C += A * B` rounded after the multiply and after the add. Shapes
// are ragged (1, 7, 33, ...: no multiple of the vector width) and the data
// spans many binades, so any reassociation, split reduction or fused
// multiply-add shows.
//
//===----------------------------------------------------------------------===//

#include "JitTestUtils.h"

#include <array>
#include <numeric>

using namespace mlir;
using namespace mlir::fp4train;
using namespace ::fp4train::testing;

namespace {

/// A contraction `C[c] += A[a] * B[b]` over an iteration space of `sizes`;
/// `a`, `b` and `c` list the iteration dimension of each operand index.
struct Contraction {
  std::vector<int64_t> sizes;
  std::vector<unsigned> a, b, c;
  /// The op in MLIR, with %a, %b, %c and the types TA, TB, TC.
  std::string op;
};

std::vector<int64_t> shapeOf(const Contraction &contraction,
                             const std::vector<unsigned> &dims) {
  std::vector<int64_t> shape;
  for (unsigned d : dims)
    shape.push_back(contraction.sizes[d]);
  return shape;
}

std::string tensorType(const std::vector<int64_t> &shape) {
  std::string type = "tensor<";
  for (int64_t size : shape)
    type += std::to_string(size) + "x";
  return type + "f32>";
}

int64_t product(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Replaces every `from` in `text` by `to`.
std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Row-major offset of the operand index that `dims` picks from `point`.
int64_t offsetOf(const std::vector<int64_t> &point,
                 const std::vector<int64_t> &sizes,
                 const std::vector<unsigned> &dims) {
  int64_t offset = 0;
  for (unsigned d : dims)
    offset = offset * sizes[d] + point[d];
  return offset;
}

/// The original loop nest: every point in lexicographic order.
std::vector<float> reference(const Contraction &contraction,
                             const std::vector<float> &a,
                             const std::vector<float> &b,
                             std::vector<float> c) {
  const std::vector<int64_t> &sizes = contraction.sizes;
  std::vector<int64_t> point(sizes.size(), 0);
  if (product(sizes) == 0)
    return c;
  while (true) {
    float &out = c[offsetOf(point, sizes, contraction.c)];
    float prod = a[offsetOf(point, sizes, contraction.a)] *
                 b[offsetOf(point, sizes, contraction.b)];
    out = out + prod;
    int d = int(sizes.size()) - 1;
    while (d >= 0 && ++point[d] == sizes[d])
      point[d--] = 0;
    if (d < 0)
      return c;
  }
}

void expectSameAsReference(const Contraction &contraction, uint32_t seed) {
  std::vector<int64_t> shapeA = shapeOf(contraction, contraction.a),
                       shapeB = shapeOf(contraction, contraction.b),
                       shapeC = shapeOf(contraction, contraction.c);
  std::string typeA = tensorType(shapeA), typeB = tensorType(shapeB),
              typeC = tensorType(shapeC);
  std::string op = replaceAll(contraction.op, "TA", typeA);
  op = replaceAll(op, "TB", typeB);
  op = replaceAll(op, "TC", typeC);
  // %c is read-only so that the result gets its own buffer:
  // fp4train-vectorize-contractions lowers contractions whose output is
  // known not to overlap an input.
  std::string source =
      "func.func @main(%a: " + typeA + ", %b: " + typeB + ", %c: " + typeC +
      " {bufferization.writable = false}) -> " + typeC + " {\n  %r = " + op +
      "\n  return %r : " + typeC + "\n}\n";
  SCOPED_TRACE(source);

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  auto function = compileSource(
      context, source, "main",
      [](OpPassManager &pm, CPUNumerics numerics) {
        buildCPULoweringPipeline(pm, /*outParams=*/true, numerics);
      },
      CPUNumerics::IR);
  if (!function)
    return;

  std::vector<float> a = makeData(product(shapeA), seed, false),
                     b = makeData(product(shapeB), seed + 1, false),
                     c = makeData(product(shapeC), seed + 2, false);
  Buffers buffers(*function);
  std::memcpy(buffers.args[0].data(), a.data(), a.size() * 4);
  std::memcpy(buffers.args[1].data(), b.data(), b.size() * 4);
  std::memcpy(buffers.args[2].data(), c.data(), c.size() * 4);
  llvm::cantFail(function->call(buffers.argPointers, buffers.outPointers));

  std::vector<float> expected = reference(contraction, a, b, c);
  std::vector<uint8_t> bytes(expected.size() * 4);
  std::memcpy(bytes.data(), expected.data(), bytes.size());
  expectSameBits("C", function->getResults()[0], buffers.outs[0], bytes);
}

/// Ragged sizes: 1, below, between and above vector widths of 4, 8 and 16.
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1},   {1, 33, 7},  {7, 1, 33},  {33, 7, 1},
    {7, 33, 17}, {33, 65, 9}, {16, 16, 16}};

const char *kMatmulTransposedA =
    "linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, "
    "affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] "
    "ins(%a, %b : TA, TB) outs(%c : TC) -> TC";
const char *kMatmulTransposedB =
    "linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
    "affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] "
    "ins(%a, %b : TA, TB) outs(%c : TC) -> TC";

const char *kBody = "{\n  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                    "    %p = arith.mulf %x, %y : f32\n"
                    "    %s = arith.addf %acc, %p : f32\n"
                    "    linalg.yield %s : f32\n  } -> TC";

TEST(ContractionLoops, Matmul) {
  for (auto [m, n, k] : kShapes)
    expectSameAsReference(
        {{m, n, k},
         {0, 2},
         {2, 1},
         {0, 1},
         "linalg.matmul ins(%a, %b : TA, TB) outs(%c : TC) -> TC"},
        uint32_t(m * 10000 + n * 100 + k));
}

TEST(ContractionLoops, MatmulTransposedA) {
  for (auto [m, n, k] : kShapes)
    expectSameAsReference(
        {{m, n, k}, {2, 0}, {2, 1}, {0, 1}, kMatmulTransposedA},
        uint32_t(m * 10000 + n * 100 + k));
}

TEST(ContractionLoops, MatmulTransposedB) {
  for (auto [m, n, k] : kShapes)
    expectSameAsReference(
        {{m, n, k}, {0, 2}, {1, 2}, {0, 1}, kMatmulTransposedB},
        uint32_t(m * 10000 + n * 100 + k));
}

TEST(ContractionLoops, BatchMatmul) {
  for (auto [m, n, k] :
       {std::array<int64_t, 3>{7, 33, 17}, std::array<int64_t, 3>{1, 9, 33}})
    expectSameAsReference(
        {{3, m, n, k},
         {0, 1, 3},
         {0, 3, 2},
         {0, 1, 2},
         "linalg.batch_matmul ins(%a, %b : TA, TB) outs(%c : TC) -> TC"},
        uint32_t(m + n + k));
}

// A generic whose result is indexed (n, m): the loop over m becomes the
// innermost, and A gets a transposed copy with m last.
TEST(ContractionLoops, GenericTransposedResult) {
  for (auto [m, n, k] : kShapes)
    expectSameAsReference(
        {{m, n, k},
         {0, 2},
         {2, 1},
         {1, 0},
         std::string("linalg.generic {indexing_maps = ["
                     "affine_map<(m, n, k) -> (m, k)>, "
                     "affine_map<(m, n, k) -> (k, n)>, "
                     "affine_map<(m, n, k) -> (n, m)>], iterator_types = "
                     "[\"parallel\", \"parallel\", \"reduction\"]} "
                     "ins(%a, %b : TA, TB) outs(%c : TC) ") +
             kBody},
        uint32_t(m * 10000 + n * 100 + k));
}

// Two reduction dimensions interleaved with the parallel ones, (m, k1, n,
// k2): the loops become (m, k1, k2, n), which keeps every output's k1-major
// order of reduction points.
TEST(ContractionLoops, GenericTwoReductions) {
  for (auto [m, n, k] :
       {std::array<int64_t, 3>{7, 33, 5}, std::array<int64_t, 3>{5, 17, 1}})
    expectSameAsReference(
        {{m, k, n, 3},
         {0, 1, 3},
         {2, 1, 3},
         {0, 2},
         std::string("linalg.generic {indexing_maps = ["
                     "affine_map<(m, k1, n, k2) -> (m, k1, k2)>, "
                     "affine_map<(m, k1, n, k2) -> (n, k1, k2)>, "
                     "affine_map<(m, k1, n, k2) -> (m, n)>], iterator_types "
                     "= [\"parallel\", \"reduction\", \"parallel\", "
                     "\"reduction\"]} ins(%a, %b : TA, TB) outs(%c : TC) ") +
             kBody},
        uint32_t(m + n + k));
}

} // namespace
