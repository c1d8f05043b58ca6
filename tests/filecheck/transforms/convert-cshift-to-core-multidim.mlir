// RUN: t10-opt %s -p convert-cshift-to-core | filecheck %s

// Two temporal dims become two nested step loops, each with its last step peeled: the outer
// position u1 = o1 + t1 (k1 = u1 mod 2) is computed per outer step, the inner u2 = o2 + 2 t1 +
// t2 runs on across outer steps (A keeps rotating). B reads both dims: it is cut along k
// (`along [.., 0, ..]`) and again along n (`and (..) along [.., 1, ..]`). The output shifts
// only at the last inner step of each outer step but the last; the very last step shifts
// nothing.
func.func @main(%x: tensor<2x8xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %w = arith.constant dense<1.000000e+00> : tensor<8x4xf32>
  %0 = rtensor.distribute %x : tensor<2x8xf32> -> !rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>
  %1 = rtensor.distribute %w : tensor<8x4xf32> -> !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>
  %mm = cshift.compute_shift "mm"(%0, %1) outer steps 2 shift 1 steps 2 shift 2 sizes [2, 1, 2] rotate [1, -1] out 2 partial [] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!rtensor.tensor<2x8xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]>>, !rtensor.tensor<8x4xf32, #rtensor.layout<grid [1, 2, 2] axes [d2, d1] tile [4, 2]>>) -> !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %mm_1 = rtensor.collect %mm : !rtensor.tensor<2x4xf32, #rtensor.layout<grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>> -> tensor<2x4xf32>
  func.return %mm_1 : tensor<2x4xf32>
}

// CHECK:      %mm = core.alloc "mm" on 4 : !core.buffer<2x2xf32>
// CHECK-NEXT: %mm_1 = arith.constant 0 : index
// CHECK-NEXT: %mm_2 = core.coord 2 of [1, 2, 2]
// CHECK-NEXT: %mm_3 = arith.constant 2 : index
// CHECK-NEXT: %mm_4 = arith.remui %mm_2, %mm_3 : index
// CHECK-NEXT: %mm_5 = arith.remui %mm_4, %mm_3 : index
// CHECK-NEXT: %mm_6 = core.coord 1 of [1, 2, 2]
// CHECK-NEXT: %mm_7 = arith.remui %mm_6, %mm_3 : index
// CHECK-NEXT: %mm_8 = arith.remui %mm_7, %mm_3 : index
// CHECK-NEXT: %mm_9 = arith.muli %mm_6, %mm_3 : index
// CHECK-NEXT: %mm_10 = arith.constant 1 : index
// CHECK-NEXT: scf.for %[[T1:.*]] = %mm_1 to %mm_10 step %mm_10 {
// CHECK-NEXT:   %[[U1:.*]] = arith.addi %mm_5, %[[T1]] : index
// CHECK-NEXT:   %[[K1:.*]] = arith.remui %[[U1]], %mm_3 : index
// CHECK-NEXT:   %[[BASE:.*]] = arith.muli %[[T1]], %mm_3 : index
// CHECK-NEXT:   scf.for %[[T2:.*]] = %mm_1 to %mm_10 step %mm_10 {
// CHECK-NEXT:     %[[T:.*]] = arith.addi %[[BASE]], %[[T2]] : index
// CHECK-NEXT:     %[[U2:.*]] = arith.addi %mm_8, %[[T]] : index
// CHECK-NEXT:     %[[K2:.*]] = arith.remui %[[U2]], %mm_3 : index
// CHECK-NEXT:     %[[ORIGIN:.*]] = arith.addi %mm_9, %[[K1]] : index
// CHECK-NEXT:     %[[SEND:.*]] = arith.muli %[[K2]], %mm_3 : index
// CHECK-NEXT:     %[[AHEAD:.*]] = arith.addi %[[U2]], %mm_10 : index
// CHECK-NEXT:     %[[SLOT:.*]] = arith.remui %[[AHEAD]], %mm_3 : index
// CHECK-NEXT:     %[[RECV:.*]] = arith.muli %[[SLOT]], %mm_3 : index
// CHECK-NEXT:     %[[OUT:.*]] = arith.remui %[[U1]], %mm_3 : index
// CHECK-NEXT:     core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 4, 8] ins(%0, %1) outs(%mm) at(%[[SEND]], %[[SEND]], %[[OUT]]) along [1, 0, 1] and(%mm_1, %[[K1]], %mm_1) along [-1, 1, -1] origin %[[ORIGIN]] {{.*}} {
// CHECK:          core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2 from %[[SEND]] to %[[RECV]] : !core.buffer<2x4xf32>
// CHECK-NEXT:   }
// CHECK:        core.kernel "mm" {{.*}} and(%mm_1, %[[K1]], %mm_1) along [-1, 1, -1]
// CHECK:        core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2
// CHECK-NEXT:   core.shift %mm ring 2 x 2 of [1, 2, 2] dim 1 size 1 from %[[K1]] to %{{.*}} : !core.buffer<2x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %mm_11 = arith.addi %mm_5, %mm_10 : index
// CHECK-NEXT: %mm_12 = arith.remui %mm_11, %mm_3 : index
// CHECK-NEXT: %mm_13 = arith.muli %mm_10, %mm_3 : index
// CHECK-NEXT: scf.for
// CHECK:        core.kernel "mm" {{.*}} and(%mm_1, %mm_12, %mm_1) along [-1, 1, -1]
// CHECK:        core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2
// CHECK-NEXT: }
// CHECK:      core.kernel "mm" {{.*}} and(%mm_1, %mm_12, %mm_1) along [-1, 1, -1]
// CHECK-NOT:  core.shift
// CHECK:      core.store %mm layout <grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1>
