//===- PrecompiledHeaders.cpp - The translation unit of a header carrier --===//
//
// An object library needs a source; the carriers of
// cmake/FP4TrainPrecompiledHeaders.cmake build only their precompiled header.
//
//===----------------------------------------------------------------------===//
