// RUN: %python %S/Inputs/conv_transpose_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// A ConvTranspose of a [1, 2, 3] signal (weight [C, O, k] = [2, 2, 3] holding 0..11, stride 2,
// pads [1, 0], bias) as two phases: output position 2t + a receives the taps k with
// k ≡ a + 1 (mod 2). Phase 0 has tap 1 (reading x[t]), phase 1 taps 2 and 0 (flipped: x[t],
// x[t + 1]); each tap set is a compile-time [C·J, O] matrix, rows (c, r), named by its taps.
// CHECK:      %b = arith.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT: %w_convtranspose_taps = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [7.000000e+00, 1.000000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT: %w_convtranspose_taps_0-2 = arith.constant dense<{{\[}}[2.000000e+00, 5.000000e+00], [0.000000e+00, 3.000000e+00], [8.000000e+00, 1.100000e+01], [6.000000e+00, 9.000000e+00]]> : tensor<4x2xf32>

// Phase 0: the Conv's im2col (window view, patches, contraction, views back) with one tap and
// no padding, then [N, O, T, 1] placed at a = 0 of [N, O, T, 2] by a padded view.
// CHECK-NEXT: %0 = rtensor.view "convt:0" %x map affine_map<(d0, d1, d2, d3) -> (d0, d2, (d1 + d3))> : tensor<1x2x3xf32> -> tensor<1x3x2x1xf32>
// CHECK-NEXT: %1 = rtensor.view "convt:1" %0
// CHECK:      %3 = linalg.generic {{.*}} ins(%1, %w_convtranspose_taps : tensor<1x3x2xf32>, tensor<2x2xf32>) {{.*}} {t10.name = "convt:2"}
// CHECK:      rtensor.view "convt:3"
// CHECK-NEXT: %[[P0:.*]] = rtensor.view "convt:4" %{{.*}} : tensor<1x2x3xf32> -> tensor<1x2x3x1xf32>
// CHECK-NEXT: %[[S0:.*]] = rtensor.view "convt:5" %[[P0]] map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> padded : tensor<1x2x3x1xf32> -> tensor<1x2x3x2xf32>

// Phase 1: two taps reading x[t + r] (x[3] is the zero padding), placed at a = 1.
// CHECK-NEXT: rtensor.view "convt:6" %x map affine_map<(d0, d1, d2, d3) -> (d0, d2, (d1 + d3))> padded : tensor<1x2x3xf32> -> tensor<1x3x2x2xf32>
// CHECK:      linalg.generic {{.*}} ins(%{{.*}}, %w_convtranspose_taps_0-2 : tensor<1x3x4xf32>, tensor<4x2xf32>) {{.*}} {t10.name = "convt:8"}
// CHECK:      %[[S1:.*]] = rtensor.view "convt:11" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + -1))> padded : tensor<1x2x3x1xf32> -> tensor<1x2x3x2xf32>

// One element-wise sum of the phases and the bias [O] as [O, 1, 1], then the interleave
// (t, a) -> 2t + a as a reshape view (the output is exactly 2·3 long: no crop).
// CHECK-NEXT: %[[B:.*]] = rtensor.view "convt:12" %b map affine_map<(d0, d1, d2) -> (d0)> : tensor<2xf32> -> tensor<2x1x1xf32>
// CHECK:      %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[S0]], %[[S1]], %[[B]] : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<2x1x1xf32>) {{.*}} {t10.name = "convt:13"}
// CHECK:        arith.addf
// CHECK-NEXT:   arith.addf
// CHECK:      %y = rtensor.view "convt:14" %[[SUM]] map affine_map<(d0, d1, d2) -> (0, d1, (d2 floordiv 2), (d2 mod 2))> : tensor<1x2x3x2xf32> -> tensor<1x2x6xf32>
// CHECK-NEXT: func.return %y : tensor<1x2x6xf32>

// The views fold into the relayouts into the sum: each phase's guard keeps it to its own a.
// RTENSOR: rtensor.relayout "convt:13/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, d2, d1)> guard affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> in [1, 2, 3, 1]
// RTENSOR: rtensor.relayout "convt:13/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, d2, d1)> guard affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + -1))> in [1, 2, 3, 1]
// RTENSOR: rtensor.relayout "convt:14/relayout" %{{.*}} map affine_map<(d0, d1, d2) -> (0, d1, (d2 floordiv 2), (d2 mod 2))>

// Two contractions and the sum run on the simulator.
// SIM: convt:2           contraction
// SIM: convt:8           contraction
// SIM: convt:13          elementwise
