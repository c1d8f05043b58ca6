// RUN: t10-opt %s --verify-diagnostics -p 't10-plan-search{chip=test-16 precision=fp16 partials=fp16}' | filecheck %s
// RUN: t10-opt %s --verify-diagnostics -p 't10-plan-search{chip=test-16 precision=fp16 partials=fp16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RT
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 partials=fp16}' 2>&1 | filecheck %s --check-prefix=NARROW
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 precision=fp16 partials=bf8}' 2>&1 | filecheck %s --check-prefix=BAD

// NARROW: t10-opt: error: t10-plan-search: partials 'fp16' are narrower than the 'fp32' storage; use partials=fp32 or wider
// BAD: t10-opt: error: t10-plan-search: unknown partials 'bf8'; choose one of fp32, fp16

// fp16 partial sums: the pinned plan that splits k over 2 cores (t10-plan-search-fp16.mlir has
// it with fp32 partials) accumulates in the f16 output itself and all-reduces f16: no fp32
// accumulator, no rounding superstep (compute 2586 - 556 of fp32 partials' rounding pass), half
// the bytes moved (exchange = 2 * 0.28 * 512 bytes, not 1024), one sync fewer.
// bytes = 2 * (32*32 + 32*16) inputs + 2 * 512 output + 2 * 256 all-reduce receive.

// CHECK: builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp16", t10.partials = "fp16",
// CHECK:      t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 2672, compute = 2030, exchange = 288, sync = 354, bytes = 4608>

// RT:      %mm = rtensor.generic "fc/MatMul"
// RT-SAME: -> !rtensor.tensor<64x64xf16, #rtensor.layout<grid [2, 4, 2] axes [d0, d1] tile [32, 16]>>
// RT-NOT:  rtensor.relayout "fc/MatMul"
// RT:      rtensor.relayout "fc/Add/relayout" %mm {

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}

