// RUN: %python %S/Inputs/norm_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// ReduceL2: a sum of squares, then its square root.
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<4x6xf32>) {{.*}} {t10.name = "l2:0"}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:   arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:      %l2 = linalg.generic {{.*}} {t10.name = "l2:1"}
// CHECK:        math.sqrt

// ReduceLogSumExp without keepdims: max-reduce (kept dims), the shifted exponentials summed
// (the shift is the max where it is finite, else 0), the max viewed to the output shape, then
// log + shift.
// CHECK:      %[[MAX:.*]] = linalg.generic {{.*}} {t10.name = "lse:0"}
// CHECK:        arith.maximumf
// CHECK:      %[[SUM:.*]] = linalg.generic {{.*}} ins(%unit, %[[MAX]] : tensor<4x6xf32>, tensor<4x1xf32>) outs(%{{.*}} : tensor<4xf32>) attrs =  {t10.name = "lse:1"}
// CHECK:        arith.cmpf oeq
// CHECK:        arith.select
// CHECK:        math.exp
// CHECK:      %[[TOP:.*]] = rtensor.view "lse:2" %[[MAX]] map affine_map<(d0) -> (d0, 0)> : tensor<4x1xf32> -> tensor<4xf32>
// CHECK:      %lse = linalg.generic {{.*}} ins(%[[SUM]], %[[TOP]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:        math.log

// Size reads only the static shape of its runtime input, and CastLike only the element type
// of its second: both fold to a constant.
// CHECK:      %nf = arith.constant dense<2.400000e+01> : tensor<f32>
// CHECK:      %y = linalg.generic {{.*}} ins(%lse, %nf : tensor<4xf32>, tensor<f32>)

// SIM:      total   {{[0-9,]+}} cycles
// SIM:      lse:1   reduction
