// RUN: %python %S/Inputs/pad_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CORE
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// A constant-mode Pad is a view `result[i] = x[i - before]`; with padding it is a padded view,
// whose zero fill is the padding of the value 0. Any other value is a select over the padded
// view with one known 0/1 vector per padded axis (here axis 1 only, from the opset-18 axes
// input); the negative amount crops. Pads of zeros are a pass-through.
// (The reflect and wrap Pads follow.)
// CHECK:      %f_inside_axis1 = arith.constant dense<[[0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<1x7xf32>
// CHECK-NEXT: %z = rtensor.view "pad_zeros" %x map affine_map<(d0, d1) -> (d0, (d1 + -1))> padded : tensor<2x5xf32> -> tensor<2x8xf32>
// CHECK:      t10.name = "relu"
// CHECK:      %[[V:.*]] = rtensor.view "pad_fill:0" %r map affine_map<(d0, d1) -> (d0, (d1 + -1))> padded : tensor<2x8xf32> -> tensor<2x7xf32>
// CHECK:      %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V]], %f_inside_axis1 : tensor<2x7xf32>, tensor<1x7xf32>)
// CHECK-SAME: t10.name = "pad_fill:1"
// CHECK:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[FILL:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:   %[[IN:.*]] = arith.cmpf one, %{{.*}}, %[[ZERO]] : f32
// CHECK-NEXT:   %[[SEL:.*]] = arith.select %[[IN]], %{{.*}}, %[[FILL]] : f32
// CHECK-NEXT:   linalg.yield %[[SEL]] : f32
// CHECK-NOT:  pad_nothing

// Reflect: the mirrored pieces before (x[2], x[1]) and after (x[5]) are views, joined with the
// input by padded views summed (as Concat joins). Wrap: one view reading (i - 1) mod 2.
// CHECK:      %[[BEFORE:.*]] = rtensor.view "pad_reflect:0" %f map affine_map<(d0, d1) -> (d0, ((d1 * -1) + 2))> : tensor<2x7xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[AFTER:.*]] = rtensor.view "pad_reflect:1" %f map affine_map<(d0, d1) -> (d0, ((d1 * -1) + 5))> : tensor<2x7xf32> -> tensor<2x1xf32>
// CHECK-NEXT: %[[P0:.*]] = rtensor.view "pad_reflect:2" %[[BEFORE]] map affine_map<(d0, d1) -> (d0, d1)> padded : tensor<2x2xf32> -> tensor<2x10xf32>
// CHECK-NEXT: %[[P1:.*]] = rtensor.view "pad_reflect:3" %f map affine_map<(d0, d1) -> (d0, (d1 + -2))> padded : tensor<2x7xf32> -> tensor<2x10xf32>
// CHECK-NEXT: %[[P2:.*]] = rtensor.view "pad_reflect:4" %[[AFTER]] map affine_map<(d0, d1) -> (d0, (d1 + -9))> padded : tensor<2x1xf32> -> tensor<2x10xf32>
// CHECK:      %m = linalg.generic {{.*}} ins(%[[P0]], %[[P1]], %[[P2]] : {{.*}}) {{.*}} {t10.name = "pad_reflect:5"}
// CHECK:      %y = rtensor.view "pad_wrap:0" %m map affine_map<(d0, d1) -> (((d0 + -1) mod 2), d1)> : tensor<2x10xf32> -> tensor<3x10xf32>
// CHECK-NEXT: func.return %y : tensor<3x10xf32>

// The padded views become relayouts whose guard zero-fills the padding.
// CORE: core.relayout "relu/relayout" {{.*}} view affine_map<(d0, d1) -> (d0, (d1 + -1))> as tensor<2x8xf32> guard affine_map<(d0, d1) -> (d0, (d1 + -1))> in [2, 5]
// CORE: core.relayout "pad_fill:1/relayout" {{.*}} view affine_map<(d0, d1) -> (d0, (d1 + -1))> as tensor<2x7xf32> guard affine_map<(d0, d1) -> (d0, (d1 + -1))> in [2, 8]

// SIM: relu/relayout        relayout
// SIM: relu                 elementwise
// SIM: pad_fill:1/relayout  relayout
// SIM: pad_fill:1           elementwise
