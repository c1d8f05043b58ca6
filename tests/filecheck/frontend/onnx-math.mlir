// RUN: %python %S/Inputs/math_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16 fuse=false}' -t t10-sim | filecheck %s --check-prefix=SIM

// Atanh is a math op; Round rounds halves to even (math.roundeven); Swish is
// x · sigmoid(alpha · x); IsInf with detect_negative=0 compares with +inf only, as 0 / 1 (the
// Cast of that bool to FLOAT passes it through).

// CHECK:      %at = linalg.generic
// CHECK:        math.atanh
// CHECK:      %r = linalg.generic
// CHECK:        math.roundeven
// CHECK:      %sw = linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[A:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[AX:.*]] = arith.mulf %[[A]], %[[X]] : f32
// CHECK:        %[[S:.*]] = arith.divf
// CHECK-NEXT:   %[[Y:.*]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:   linalg.yield %[[Y]] : f32
// CHECK:      %inf = linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:   %{{.*}} = arith.cmpf oeq, %[[X]], %[[INF]] : f32
// CHECK-NOT:    arith.cmpf
// CHECK:        linalg.yield

// Trilu (lower, k = 1): a select by a known 0 / 1 triangle (column - row <= 1), not a product.
// CHECK:      %y_keep = arith.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00,
// CHECK:      %y = linalg.generic {{.*}} ins(%inf, %y_keep : tensor<4x6xf32>, tensor<4x6xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[K:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[IN:.*]] = arith.cmpf one, %[[K]], %[[Z]] : f32
// CHECK-NEXT:   %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %{{.*}} = arith.select %[[IN]], %[[X]], %[[Z2]] : f32

// OneHot (axis 1, depth 3) of the rounded floats: the indices viewed with a size-1 axis,
// truncated, wrapped if negative, compared with a constant of the positions.
// CHECK:      %[[IDX:.*]] = rtensor.view "onehot:0" %r map affine_map<(d0, d1, d2) -> (d0, d2)> : tensor<4x6xf32> -> tensor<4x1x6xf32>
// CHECK-NEXT: %hot_positions = arith.constant dense<{{\[\[\[}}0.000000e+00], [1.000000e+00], [2.000000e+00]]]> : tensor<1x3x1xf32>
// CHECK:      %hot = linalg.generic {{.*}} ins(%[[IDX]], %hot_positions : tensor<4x1x6xf32>, tensor<1x3x1xf32>)
// CHECK:        math.trunc
// CHECK:        arith.cmpf olt
// CHECK:        arith.cmpf oeq

// SIM: atanh   elementwise
// SIM: round   elementwise
// SIM: swish   elementwise
// SIM: isinf   elementwise
// SIM: trilu   elementwise
