//===- Prmt.cpp - prmt.b32 model
//-------------------------------------------===//
//
// Source: PTX ISA §9.7.9.7 "prmt": `prmt.b32 d, a, b, c` picks bytes from
// the eight bytes {b, a} (b4..b7 of b, b0..b3 of a); in the default mode
// the four nibbles of c[15:0] control the four result bytes, nibble i
// (c[4i+3:4i]) for byte i: its low three bits select a byte of {b, a}, and
// its msb selects the sign mode, in which the result byte is the selected
// byte's bit 7 replicated (0x00 or 0xFF) instead of the byte itself.
//
//===----------------------------------------------------------------------===//

#include "fp4train/Emulation/PTX.h"

uint32_t fp4train::emulation::ptx::prmt(uint32_t a, uint32_t b, uint32_t c) {
  const uint64_t pool = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t d = 0;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned control = (c >> (4 * i)) & 0xF;
    uint32_t byte = (pool >> (8 * (control & 7))) & 0xFF;
    if (control & 8)
      byte = (byte & 0x80) ? 0xFF : 0x00;
    d |= byte << (8 * i);
  }
  return d;
}
