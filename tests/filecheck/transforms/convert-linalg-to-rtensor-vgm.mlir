// RUN: t10-opt %s -p convert-linalg-to-rtensor --verify-diagnostics | filecheck %s

// Operators planned by vgm (`t10.store`) load from and store to homes, `host_layout` over the
// module's `t10.home_cores`: the argument and the weight are distributed into their homes
// (once, where they are defined), loaded into the matmul's layouts ("mm/relayout"); its
// output is stored into its home ("mm/store"), where the ReLU loads it from (its plan places
// it as its home: a relayout that only renames, no estimate); the ReLU's output, already in
// its home, is stored for free and collected from there.

// CHECK:      %0 = rtensor.distribute %x : tensor<64x32xf32> -> !rtensor.tensor<64x32xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 32]>>
// CHECK-NEXT: %w = arith.constant dense<1.000000e+00> : tensor<32x16xf32>
// CHECK-NEXT: %1 = rtensor.distribute %w : tensor<32x16xf32> -> !rtensor.tensor<32x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [2, 16]>>
// CHECK-NEXT: %2 = rtensor.relayout "mm/relayout" %0 {estimate = #rtensor.estimate<cycles = 488, compute = 0, exchange = 252, sync = 236, bytes = 512>} : !rtensor.tensor<64x32xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 32]>> -> !rtensor.tensor<64x32xf32, #rtensor.layout<grid [4, 1, 4] axes [d0, d2] tile [16, 8]>>
// CHECK-NEXT: %3 = rtensor.relayout "mm/relayout" %1 {estimate = #rtensor.estimate<cycles = 488, compute = 0, exchange = 252, sync = 236, bytes = 512>} : !rtensor.tensor<32x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [2, 16]>> -> !rtensor.tensor<32x16xf32, #rtensor.layout<grid [4, 1, 4] axes [d2, -] tile [8, 16]>>
// CHECK-NEXT: %mm = rtensor.generic "mm"(%2, %3)
// CHECK:      %mm_1 = rtensor.relayout "mm/store" %mm {estimate = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 256>} : !rtensor.tensor<64x16xf32, #rtensor.layout<grid [4, 1, 4] axes [d0, -] tile [16, 16]>> -> !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 16]>>
// CHECK-NEXT: %4 = rtensor.relayout "relu/relayout" %mm_1 : !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 16]>> -> !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16, 1] axes [d0, -] tile [4, 16]>>
// CHECK-NEXT: %r = rtensor.generic "relu"(%4)
// CHECK:      %r_1 = rtensor.relayout "relu/store" %r {estimate = #rtensor.estimate<cycles = 0, compute = 0, exchange = 0, sync = 0, bytes = 0>} : !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16, 1] axes [d0, -] tile [4, 16]>> -> !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 16]>>
// CHECK-NEXT: %r_2 = rtensor.collect %r_1 : !rtensor.tensor<64x16xf32, #rtensor.layout<grid [16] axes [d0, -] tile [4, 16]>> -> tensor<64x16xf32>
// CHECK-NEXT: func.return %r_2 : tensor<64x16xf32>

builtin.module attributes {t10.home_cores = 16 : i64, t10.chip = "test-16", t10.planner = "vgm", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 3712 : i64} {
  func.func @main(%x: tensor<64x32xf32> {t10.name = "x"}) -> (tensor<64x16xf32> {t10.name = "y"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<32x16xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x16xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x32xf32>, tensor<32x16xf32>) outs(%z : tensor<64x16xf32>) attrs =  {t10.name = "mm", t10.plan = #rtensor.plan<grid [4, 1, 4]>, t10.estimate = #rtensor.estimate<cycles = 2126, compute = 1340, exchange = 432, sync = 354, bytes = 2816>, t10.relayout = #rtensor.estimate<cycles = 488, compute = 0, exchange = 252, sync = 236, bytes = 512>, t10.store = #rtensor.estimate<cycles = 118, compute = 0, exchange = 0, sync = 118, bytes = 256>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x16xf32>
    %e = tensor.empty() : tensor<64x16xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) attrs =  {t10.name = "relu", t10.plan = #rtensor.plan<grid [16, 1]>, t10.estimate = #rtensor.estimate<cycles = 350, compute = 232, exchange = 0, sync = 118, bytes = 512>, t10.store = #rtensor.estimate<cycles = 0, compute = 0, exchange = 0, sync = 0, bytes = 0>} {
    ^bb0(%a_1: f32, %o: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %a_1, %zero : f32
      linalg.yield %m : f32
    } -> tensor<64x16xf32>
    func.return %r : tensor<64x16xf32>
  }
}

