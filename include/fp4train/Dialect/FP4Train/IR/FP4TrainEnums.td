//===- FP4TrainEnums.td - fp4train enumerations ------------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINENUMS_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINENUMS_TD

include "mlir/IR/EnumAttr.td"

def FP4Train_RoundingMode : I32EnumAttr<"RoundingMode",
    "rounding of a value onto the element grid", [
      I32EnumAttrCase<"nearest_even", 0>,
      I32EnumAttrCase<"stochastic", 1>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_ScaleMode : I32EnumAttr<"ScaleMode",
    "how an MX block scale is derived from the block's amax", [
      // [MX1]: e = floor(log2(amax)) - emax_elem (OCP MX v1.0).
      I32EnumAttrCase<"floor", 0>,
      // [MX2]: e = ceil(log2(amax / max_elem)), never clips.
      I32EnumAttrCase<"rceil", 1>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_Format : I32EnumAttr<"Format",
    "a block-scaled format preset (element type, scale type and block)", [
      I32EnumAttrCase<"mxfp4", 0>,
      I32EnumAttrCase<"nvfp4", 1>,
      I32EnumAttrCase<"mxfp8_e4m3", 2>,
      I32EnumAttrCase<"mxfp8_e5m2", 3>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_HadamardSigns : I32EnumAttr<"HadamardSigns",
    "the sign vector of a Hadamard rotation", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"fixed", 1>,
      I32EnumAttrCase<"random", 2>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_HadamardPrecision : I32EnumAttr<"HadamardPrecision",
    "the precision of a recipe's rotated operands", [
      // Rotated in f32 and kept in f32 ([H1]).
      I32EnumAttrCase<"f32", 0>,
      // Rotated in f32, then rounded to the operand's own element type:
      // TransformerEngine's RHT on bf16 inputs ([H2]).
      I32EnumAttrCase<"operand", 1>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_GemmAlpha : I32EnumAttr<"GemmAlpha",
    "how a recipe's GEMM derives the factor of its product", [
      // [GEMM1] g = S_dec,a · S_dec,b, the operands' global decode scales.
      I32EnumAttrCase<"scales", 0>,
      // [TE2] alpha = amax_a · amax_b / (6² · 448²), TransformerEngine's.
      I32EnumAttrCase<"amax", 1>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

def FP4Train_Role : I32EnumAttr<"Role",
    "the role of a contraction in a training step", [
      // Y = X . W^T
      I32EnumAttrCase<"fprop", 0>,
      // dX = dY . W
      I32EnumAttrCase<"dgrad", 1>,
      // dW = dY^T . X
      I32EnumAttrCase<"wgrad", 2>
    ]> {
  let cppNamespace = "::mlir::fp4train";
  let genSpecializedAttr = 0;
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_IR_FP4TRAINENUMS_TD
