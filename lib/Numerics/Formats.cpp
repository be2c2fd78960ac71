//===- Formats.cpp - Element and scale codecs for MX/NV formats -----------===//

#include "fp4train/Numerics/Formats.h"

#include <algorithm>

namespace fp4train::numerics {

uint8_t encodeE8M0RoundUp(float x) {
  uint32_t bits = floatToBits(x) & 0x7FFFFFFFu;
  if (bits >= 0x7F800000u)
    return 0xFF;
  if (bits == 0)
    return 0x00;
  uint32_t exponentField = bits >> 23;
  uint32_t mantissa = bits & 0x7FFFFFu;
  int32_t ceilLog2;
  if (exponentField != 0) {
    ceilLog2 = int32_t(exponentField) - 127 + (mantissa != 0);
  } else {
    // Subnormal: x = mantissa · 2^-149.
    int32_t floorLog2 = 31 - __builtin_clz(mantissa);
    ceilLog2 = floorLog2 + ((mantissa & (mantissa - 1)) != 0) - 149;
  }
  return uint8_t(std::clamp(ceilLog2, -127, 127) + 127);
}

} // namespace fp4train::numerics
