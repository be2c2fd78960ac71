// The toolkit given, else $CUDA_ROOT, must hold an executable bin/ptxas.
// RUN: rm -rf %t && mkdir -p %t/bin && printf '#!/bin/sh\n' > %t/bin/ptxas
// RUN: not fp4-opt %s --fp4train-check-ptxas="toolkit=%t" 2>&1 | FileCheck %s --check-prefix=NOEXEC
// RUN: chmod +x %t/bin/ptxas
// RUN: fp4-opt %s --fp4train-check-ptxas="toolkit=%t" | FileCheck %s
// RUN: env CUDA_ROOT=%t fp4-opt %s --fp4train-check-ptxas | FileCheck %s
// RUN: not fp4-opt %s --fp4train-check-ptxas="toolkit=%t/missing" 2>&1 | FileCheck %s --check-prefix=MISSING

// The module is unchanged.
// CHECK: func.func @f()
// NOEXEC: error: format=bin needs ptxas from the CUDA toolkit: {{.*}}/bin/ptxas is not an executable; set toolkit= or $CUDA_ROOT, or use format=isa for PTX
// MISSING: error: format=bin needs ptxas from the CUDA toolkit: {{.*}}missing/bin/ptxas is not an executable
func.func @f() {
  return
}
