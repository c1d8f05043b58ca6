// RUN: t10-opt %s -p convert-linalg-to-rtensor | filecheck %s

// A weight kept cold (`t10.cold = array<i64: 1>`) is distributed into its home, host_layout
// over the plan's 16 cores, right where it is defined (resident for the whole program), and
// expanded from there into the plan's rotating layout by a relayout labelled with its
// operator, carrying the operator's t10.relayout estimate.

// CHECK:      %w0 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
// CHECK-NEXT: %0 = rtensor.distribute %w0 : tensor<128x128xf32> -> !rtensor.tensor<128x128xf32, #rtensor.layout<grid [16] axes [d0, -] tile [8, 128]>>
// CHECK-NEXT: %1 = rtensor.distribute %x : tensor<512x128xf32> -> !rtensor.tensor<512x128xf32, #rtensor.layout<grid [16, 1, 1] axes [d0, -] tile [32, 128]>>
// CHECK-NEXT: %2 = rtensor.relayout "mm0/relayout" %0 {estimate = #rtensor.estimate<cycles = 2412, compute = 0, exchange = 2294, sync = 118, bytes = 16384>} : !rtensor.tensor<128x128xf32, #rtensor.layout<grid [16] axes [d0, -] tile [8, 128]>> -> !rtensor.tensor<128x128xf32, #rtensor.layout<grid [16, 1, 1] axes [-, -] tile [128, 128] rotate 0 ring d0 x 8 steps 8 skew [(d0, 8, 1)]>>
// CHECK-NEXT: %h0 = rtensor.generic "mm0"(%1, %2)

builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 57344 : i64} {
  func.func @main(%x: tensor<512x128xf32> {t10.name = "x"}) -> (tensor<512x128xf32> {t10.name = "y"}) {
    %w0 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
    %z0 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
    %h0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w0 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z0 : tensor<512x128xf32>) attrs =  {t10.name = "mm0", t10.plan = #rtensor.plan<grid [16, 1, 1] shift d2 steps 8 rotate [(1, d0, 8)]>, t10.estimate = #rtensor.estimate<cycles = 70434, compute = 53432, exchange = 16058, sync = 944, bytes = 49152>, t10.relayout = #rtensor.estimate<cycles = 2412, compute = 0, exchange = 2294, sync = 118, bytes = 16384>, t10.cold = array<i64: 1>} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<512x128xf32>
    func.return %h0 : tensor<512x128xf32>
  }
}
