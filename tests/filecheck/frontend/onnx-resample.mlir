// RUN: %python %S/Inputs/resample_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// The weights of the linear Resize below, a constant hoisted to the top.
// CHECK:      %y_weights2 = arith.constant dense<{{\[\[}}5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01]]> : tensor<3x6xf32>

// A nearest Resize x2 reads input position i floordiv 2 along each scaled axis: a view, as are
// DepthToSpace and SpaceToDepth (floordiv / mod by the block size); only the Relu computes.
// CHECK:      %up = rtensor.view "up" %x map affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 floordiv 2), (d3 floordiv 2))> : tensor<1x4x3x5xf32> -> tensor<1x4x6x10xf32>
// CHECK-NEXT: %d2s = rtensor.view "d2s" %up map affine_map<(d0, d1, d2, d3) -> (d0, ((((d2 mod 2) * 2) + (d3 mod 2)) + d1), (d2 floordiv 2), (d3 floordiv 2))> : tensor<1x4x6x10xf32> -> tensor<1x1x12x20xf32>
// CHECK-NEXT: %s2d = rtensor.view "s2d" %d2s map affine_map<(d0, d1, d2, d3) -> (d0, 0, ((d2 * 2) + (d1 floordiv 2)), ((d3 * 2) + (d1 mod 2)))> : tensor<1x1x12x20xf32> -> tensor<1x4x6x10xf32>
// CHECK:      linalg.generic
// CHECK-SAME: ins(%s2d : tensor<1x4x6x10xf32>)
// CHECK-SAME: t10.name = "relu"

// A linear Resize (half_pixel, 6 -> 3 rows, columns kept) is one contraction per resized axis
// with the ONNX definition's weights (hoisted, above): each output row averages two rows.
// CHECK:      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%r, %y_weights2 : tensor<1x4x6x10xf32>, tensor<3x6xf32>)
// CHECK-SAME: t10.name = "bilinear:2"
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK-NEXT:   arith.addf %[[ACC]], %[[P]] : f32

// SIM:      total   {{[0-9,]+}} cycles
// SIM:      relu/relayout  relayout
// SIM-NEXT: relu           elementwise
// SIM:      bilinear:2     contraction
