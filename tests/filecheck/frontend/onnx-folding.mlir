// RUN: %python %S/Inputs/folding_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16 fuse=false}' -t t10-sim | filecheck %s --check-prefix=SIM
// RUN: t10 run %t.onnx --chip test-16 --check | filecheck %s --check-prefix=CHECKED

// Nodes whose inputs are all known at compile time (initializers, Constant nodes, folded
// results, and the shape of any value) are evaluated at import: the Shape → Gather →
// Unsqueeze → Concat chain giving Reshape its shape, the Reshape of the bias, the causal mask
// (Range, LessOrEqual, Slice) and Expand's shape (ConstantOfShape, Concat) leave no ops behind.
// Only the Add, the Where and the Expand compute.

// CHECK:      func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}) -> (tensor<2x4x8xf32> {t10.name = "y"}) {
// CHECK-NEXT:   %neg = arith.constant dense<-1.000000e+04> : tensor<f32>

// The bias reshaped to [rows, -1] = [4, 8] is a float32 constant.
// CHECK-NEXT:   %bias_2d = arith.constant dense<{{\[\[}}-1.000000e+00, {{.*}}, 1.000000e+00]]> : tensor<4x8xf32>
// CHECK-NEXT:   tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:   %a = linalg.generic {{.*}} ins(%x, %bias_2d : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-SAME:     t10.name = "add"

// Where: the known BOOL mask becomes a float32 0/1 input; the body selects by mask != 0.
// CHECK:        %mask_f32 = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, {{.*}}> : tensor<4x8xf32>
// CHECK:        %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:     ins(%mask_f32, %a, %neg : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>)
// CHECK-SAME:     t10.name = "where"
// CHECK-NEXT:   ^bb0(%[[C:.*]]: f32, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[P:.*]] = arith.cmpf one, %[[C]], %[[ZERO]] : f32
// CHECK-NEXT:     %[[S:.*]] = arith.select %[[P]], %[[A]], %[[B]] : f32
// CHECK-NEXT:     linalg.yield %[[S]] : f32

// Expand to [2, 4, 8]: an identity generic whose input skips the new leading loop.
// CHECK:        %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:     t10.name = "expand"
// CHECK-NEXT:   ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:     linalg.yield %[[IN]] : f32
// CHECK-NEXT:   } -> tensor<2x4x8xf32>
// CHECK-NEXT:   func.return %y : tensor<2x4x8xf32>

// SIM:      add     elementwise
// SIM-NEXT: where   elementwise
// SIM-NEXT: expand  elementwise

// CHECKED:  check   PASSED against onnxruntime
