// A function whose symbol is not a plain file name: its outlined kernels'
// gpu.binary takes the name, which fp4-gpu-prepare must not join to --out.
func.func @"up/../../x"(%x: tensor<64x256xf32>)
    -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<64x256xf32>
      -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}
