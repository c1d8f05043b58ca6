// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=mesh-64}' | filecheck %s --check-prefix=AWARE
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=mesh-64 placement=oblivious}' | filecheck %s --check-prefix=LINEAR
// RUN: not t10-opt %s -p 't10-plan-search{chip=mesh-64 placement=nowhere}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=mesh-64},convert-linalg-to-rtensor,convert-rtensor-to-cshift,convert-cshift-to-core' | filecheck %s --check-prefix=CORE

// A 256x1024x1024 matmul on the 8x8 mesh rotates its partial sums on rings of 8 cores.
// Placed as the plan search chooses, each ring runs down a mesh column, folded: every shift
// goes at most two hops, 5 cycles of latency fewer than the linear ring's 7-hop wrap, for
// each of the 7 shifts.
// AWARE:  t10.plan = #rtensor.plan<grid [1, 8, 8] shift d1 steps 8 rotate [(out, d2, 8)] placed {{\[\[}}d2:8], [d1:8]] fold [(d2, 8)]>, t10.estimate = #rtensor.estimate<cycles = 365346, compute = 332272, exchange = 32130, sync = 944, bytes = 229376>
// LINEAR: t10.plan = #rtensor.plan<grid [1, 8, 8] shift d1 steps 8 rotate [(out, d2, 8)]>, t10.estimate = #rtensor.estimate<cycles = 365381, compute = 332272, exchange = 32165, sync = 944, bytes = 229376>
// BAD: t10-plan-search: unknown placement 'nowhere'; choose one of aware, oblivious

// The lowerings carry the placement to the core ops that run on the grid: the kernel and
// the shift of the partial sums name it, as their buffers' layouts do.
// CORE: core.alloc "mm" on 64 : !core.buffer<256x32xf32>
// CORE: core.kernel "mm" on [1, 8, 8] placed <{{\[\[}}d2:8], [d1:8]] fold [(d2, 8)]> sizes
// CORE: core.shift %{{.*}} ring 2 x 8 of [1, 8, 8] placed <{{\[\[}}d2:8], [d1:8]] fold [(d2, 8)]> dim 1 size 16

builtin.module {
  func.func @main(%x: tensor<256x1024xf32> {t10.name = "input"}) -> (tensor<256x1024xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<1024x1024xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<256x1024xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<256x1024xf32>, tensor<1024x1024xf32>) outs(%z : tensor<256x1024xf32>) attrs = {t10.name = "mm"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<256x1024xf32>
    func.return %mm : tensor<256x1024xf32>
  }
}

// -----

// A pinned plan's placement must fit the chip's 8x8 cores.
// AWARE: operator 'mm': pinned plan <grid [1, 8, 8] placed {{\[\[}}d1:8, d2:8], []]> is invalid: its placement <placed {{\[\[}}d1:8, d2:8], []]> does not fit: dim 0 of the chip has 8 cores, but the parts laid on it take 64

builtin.module {
  func.func @main(%x: tensor<256x1024xf32> {t10.name = "input"}) -> (tensor<256x1024xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<1024x1024xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<256x1024xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<256x1024xf32>, tensor<1024x1024xf32>) outs(%z : tensor<256x1024xf32>) attrs = {t10.name = "mm", t10.plan = #rtensor.plan<grid [1, 8, 8] placed [[d1:8, d2:8], []]>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<256x1024xf32>
    func.return %mm : tensor<256x1024xf32>
  }
}
