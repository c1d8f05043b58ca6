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
// CHECK:      %scaled = linalg.generic {{.*}} ins(%lse, %nf : tensor<4xf32>, tensor<f32>)

// RMSNormalization: a sum of squares, sqrt(s / n + eps), then x / rms · scale.
// CHECK:      t10.name = "rms:0"
// CHECK:        arith.mulf
// CHECK:      t10.name = "rms:1"
// CHECK:        math.sqrt
// CHECK:      %rms = linalg.generic {{.*}} ins(%x, %{{.*}}, %g : tensor<4x6xf32>, tensor<4x1xf32>, tensor<6xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[Q:.*]] = arith.divf %[[X]], %[[R]] : f32
// CHECK-NEXT:   arith.mulf %[[Q]], %[[G]] : f32

// LpNormalization (p = 1, axis 0): a sum of |x|, then x / norm, 0 where the norm is 0.
// CHECK:      t10.name = "lp:0"
// CHECK:        math.absf
// CHECK:      %lp = linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[ISZ:.*]] = arith.cmpf oeq, %[[N]], %[[Z]] : f32
// CHECK-NEXT:   %[[Q:.*]] = arith.divf %[[X]], %[[N]] : f32
// CHECK-NEXT:   arith.select %[[ISZ]], %[[Z]], %[[Q]] : f32

// ArgMax: the max of the non-NaN elements, then the first position holding it (a min over a
// constant of positions), or 0 where the first element (a view) is NaN.
// CHECK:      %[[TOP:[0-9]+]] = linalg.generic {{.*}}t10.name = "arg:0"
// CHECK:        arith.cmpf uno
// CHECK:        arith.maximumf
// CHECK:      %arg_positions = arith.constant dense<[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]]> : tensor<1x6xf32>
// CHECK-NEXT: %[[HEAD:[0-9]+]] = rtensor.view "arg:1" %lp map affine_map<(d0, d1) -> (d0, 0)> : tensor<4x6xf32> -> tensor<4x1xf32>
// CHECK:      %arg = linalg.generic {{.*}} ins(%lp, %[[TOP]], %arg_positions, %[[HEAD]] : {{.*}}) outs(%{{.*}} : tensor<4xf32>) attrs =  {t10.name = "arg:2"}
// CHECK:        arith.cmpf oeq
// CHECK:        arith.cmpf uno
// CHECK:        arith.minimumf

// SIM:      total   {{[0-9,]+}} cycles
// SIM:      lse:1   reduction
// SIM:      arg:2   reduction
