// RUN: t10-opt %s -p convert-linalg-to-rtensor | filecheck %s
// RUN: t10-opt %s -p convert-linalg-to-rtensor,convert-rtensor-to-cshift,convert-cshift-to-core,convert-core-to-chip | filecheck %s --check-prefix=CHIP

// A weight kept off chip (`t10.offchip = array<i64: 1>` on mm1) is loaded by an
// `rtensor.load` labelled with its operator; `t10.ahead = 1` puts the load one operator
// earlier, before the ops made for mm0 (its constant moves up with it). At the chip level
// its buffer is allocated there and filled by a `chip.load` between supersteps, which runs
// beside mm0's superstep, and it is freed after mm1, its last reader (the on-chip weight of
// mm0 is loaded before the program, as always, and never freed).

// CHECK:      %w0 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
// CHECK-NEXT: %w1 = arith.constant dense<2.000000e-02> : tensor<128x128xf32>
// CHECK-NEXT: %0 = rtensor.load "mm1/load" %w1 : tensor<128x128xf32> -> !rtensor.tensor<128x128xf32, #rtensor.layout<grid [16, 1, 1] axes [-, -] tile [128, 128]>>
// CHECK-NEXT: %1 = rtensor.distribute %x
// CHECK:      %h0 = rtensor.generic "mm0"(%1, %2)
// CHECK:      %h1 = rtensor.generic "mm1"(%h0, %0)

// CHIP:      %3 = core.alloc "mm1/in1" on 16 : !core.buffer<128x128xf32>
// CHIP-NEXT: chip.load "mm1/load" %w1 into %3 layout <grid [16, 1, 1] axes [-, -] tile [128, 128]> : tensor<128x128xf32>, !core.buffer<128x128xf32>
// CHIP:      chip.superstep "mm0" {
// CHIP:      chip.superstep "mm1" {
// CHIP:      core.free %3 : !core.buffer<128x128xf32>
// CHIP-NOT:  core.free %2

builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 57344 : i64} {
  func.func @main(%x: tensor<512x128xf32> {t10.name = "x"}) -> (tensor<512x128xf32> {t10.name = "y"}) {
    %w0 = arith.constant dense<1.000000e-02> : tensor<128x128xf32>
    %z0 = arith.constant dense<0.000000e+00> : tensor<512x128xf32>
    %h0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w0 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z0 : tensor<512x128xf32>) attrs =  {t10.name = "mm0", t10.plan = #rtensor.plan<grid [16, 1, 1]>} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<512x128xf32>
    %w1 = arith.constant dense<2.000000e-02> : tensor<128x128xf32>
    %h1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h0, %w1 : tensor<512x128xf32>, tensor<128x128xf32>) outs(%z0 : tensor<512x128xf32>) attrs =  {t10.name = "mm1", t10.plan = #rtensor.plan<grid [16, 1, 1]>, t10.offchip = array<i64: 1>, t10.ahead = 1 : i64} {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<512x128xf32>
    func.return %h1 : tensor<512x128xf32>
  }
}
