// RUN: t10-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A plan with two temporal dims prints one `shift` clause per dim, outer first; a plan with
// one prints as before.
"test.op"() {two = #rtensor.plan<grid [2, 2, 1] shift d1 steps 2 rotate [(1, d0, 2)] shift d2 steps 4 rotate [(0, d1, 2)]>, one = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>} : () -> ()

// CHECK: "test.op"() {two = #rtensor.plan<grid [2, 2, 1] shift d1 steps 2 rotate [(1, d0, 2)] shift d2 steps 4 rotate [(0, d1, 2)]>, one = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>} : () -> ()

// -----

// The two temporal dims must differ.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 1] shift d2 steps 2 rotate [(1, d0, 2)] shift d2 steps 2 rotate [(0, d1, 2)]>} : () -> ()

// CHECK: plan shifts d2 twice

// -----

// Each temporal dim rotates something along it.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 1] shift d1 steps 2 rotate [] shift d2 steps 2 rotate [(0, d1, 2)]>} : () -> ()

// CHECK: a plan that shifts d1 needs at least 2 steps and a rotation

// -----

// Paces align on each dim: the outer steps are a multiple of its rotations' pieces.
"test.op"() {plan = #rtensor.plan<grid [4, 2, 1] shift d1 steps 2 rotate [(1, d0, 4)] shift d2 steps 2 rotate [(0, d1, 2)]>} : () -> ()

// CHECK: plan steps 2 must be a multiple of every rotation's pieces (4): paces must align

// -----

// Rings are distinct across both dims.
"test.op"() {plan = #rtensor.plan<grid [2, 2, 2] shift d1 steps 2 rotate [(1, d2, 2)] shift d2 steps 2 rotate [(0, d2, 2)]>} : () -> ()

// CHECK: rotations of a plan must use distinct ring dims

// -----

// With two temporal dims the output may rotate along the outer one only (here k is outer).
func.func @main(%x: tensor<2x8xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x4xf32>
  %0 = rtensor.distribute %x : tensor<2x8xf32> -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>
  %1 = rtensor.distribute %w : tensor<8x4xf32> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>
  %mm = rtensor.generic "mm"(%0, %1) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], plan = #rtensor.plan<grid [1, 2, 2] shift d2 steps 2 rotate [(0, d1, 2)] shift d1 steps 2 rotate [(out, d2, 2)]>} : (!rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>, !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>) -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> -> tensor<2x4xf32>
  func.return %mm_1 : tensor<2x4xf32>
}

// CHECK: rtensor.generic 'mm': with two shift dims the output rotates along the outer one
