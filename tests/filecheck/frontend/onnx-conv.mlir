// RUN: %python %S/Inputs/conv_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor,convert-rtensor-to-cshift' | filecheck %s --check-prefix=CSHIFT
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor,convert-rtensor-to-cshift,convert-cshift-to-core' | filecheck %s --check-prefix=CORE
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' | filecheck %s --check-prefix=CHIP
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// A grouped Conv (G = 2, 3x3 kernel, stride 2, pads 1) of a [1, 4, 5, 4] image as an im2col:
// the weight [4, 2, 3, 3] becomes G [C/G·kh·kw, O/G] = [2, 18, 2] matrices at compile time.
// CHECK:      %w_as_patch_matrix_g2 = arith.constant dense<{{.*}}> : tensor<2x18x2xf32>
// CHECK-NEXT: %b = arith.constant

// The window view [N, G, Ho, Wo, C/G, kh, kw]: (n, g, oh, ow, c, rh, rw) reads
// (n, g·2 + c, oh·2 + rh - 1, ow·2 + rw - 1), zero outside the image (padded); then the patches
// [N, G, Ho·Wo, C/G·kh·kw].
// CHECK-NEXT: %0 = rtensor.view "conv:0" %x map affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, ((d1 * 2) + d4), (((d2 * 2) + d5) + -1), (((d3 * 2) + d6) + -1))> padded : tensor<1x4x5x4xf32> -> tensor<1x2x3x2x2x3x3xf32>
// CHECK-NEXT: %1 = rtensor.view "conv:1" %0 map affine_map<(d0, d1, d2, d3) -> (0, d1, (d2 floordiv 2), (d2 mod 2), (d3 floordiv 9), ((d3 floordiv 3) mod 3), (d3 mod 3))> : tensor<1x2x3x2x2x3x3xf32> -> tensor<1x2x6x18xf32>

// One contraction, the group a batch loop of both operands (n, g, patch, o; k reduced) ...
// CHECK-NEXT: %2 = arith.constant dense<0.000000e+00> : tensor<1x2x6x2xf32>
// CHECK-NEXT: %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%1, %w_as_patch_matrix_g2 : tensor<1x2x6x18xf32>, tensor<2x18x2xf32>) outs(%2 : tensor<1x2x6x2xf32>) attrs = {t10.name = "conv:2"} {
// CHECK:        arith.mulf
// CHECK-NEXT:   arith.addf
// CHECK:      } -> tensor<1x2x6x2xf32>

// ... the bias [O] viewed as [G, 1, O/G] and added ...
// CHECK-NEXT: %9 = rtensor.view "conv:3" %b map affine_map<(d0, d1, d2) -> (((d0 * 2) + d2))> : tensor<4xf32> -> tensor<2x1x2xf32>
// CHECK:      linalg.generic {{.*}} ins(%3, %9 : tensor<1x2x6x2xf32>, tensor<2x1x2xf32>) {{.*}} {t10.name = "conv:4"}

// ... and views back to NCHW.
// CHECK:      rtensor.view "conv:5" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)> : tensor<1x2x6x2xf32> -> tensor<1x2x2x6xf32>
// CHECK-NEXT: %y = rtensor.view "conv:6" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, (d1 floordiv 2), (d1 mod 2), ((d2 * 2) + d3))> : tensor<1x2x2x6xf32> -> tensor<1x4x3x2xf32>
// CHECK-NEXT: func.return %y : tensor<1x4x3x2xf32>

// The window and patch views fold into one relayout of the image into the contraction's layout
// (the im2col / halo movement, costed by the plan search): the composed map, and the guard that
// zero-fills the padding (its reads outside [1, 4, 5, 4]).
// RTENSOR:     rtensor.relayout "conv:2/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, ((d1 * 2) + (d3 floordiv 9)), ((((d2 floordiv 2) * 2) + ((d3 floordiv 3) mod 3)) + -1), ((((d2 mod 2) * 2) + (d3 mod 3)) + -1))> guard affine_map<(d0, d1, d2, d3) -> (0, ((d1 * 2) + (d3 floordiv 9)), ((((d2 floordiv 2) * 2) + ((d3 floordiv 3) mod 3)) + -1), ((((d2 mod 2) * 2) + (d3 mod 3)) + -1))> in [1, 4, 5, 4] {estimate = #rtensor.estimate<{{.*}}>} : !rtensor.tensor<1x4x5x4xf32, {{.*}}> -> !rtensor.tensor<1x2x6x18xf32,
// RTENSOR:     rtensor.generic "conv:2"
// RTENSOR:     rtensor.relayout "conv:4/relayout" %{{.*}} map affine_map<(d0, d1, d2) -> (((d0 * 2) + d2))>
// RTENSOR:     rtensor.generic "conv:4"
// RTENSOR:     rtensor.relayout "conv:6/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, (d1 floordiv 2), ((d2 * 2) + d3), (d1 mod 2))>
// RTENSOR-NOT: rtensor.view

// The window (halo) relayout at each lower level: cshift keeps it as an rtensor.relayout with
// its map and guard; core makes it one core.relayout from the input's layout into the
// contraction's, through the same map (each core receives its windows, halo included); chip
// gives it a superstep whose exchange phase it is, before the contraction's.
// CSHIFT:      rtensor.relayout "conv:2/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, ((d1 * 2) + (d3 floordiv 9)), {{.*}} guard affine_map<{{.*}}> in [1, 4, 5, 4]
// CSHIFT:      cshift.compute_shift "conv:2"(%{{.*}}, %{{.*}}) steps 1
// CORE:        %[[WIN:.*]] = core.alloc "conv:2/relayout" on 16 : !core.buffer<1x1x3x5xf32>
// CORE-NEXT:   core.relayout "conv:2/relayout" %{{.*}} to %[[WIN]] of tensor<1x4x5x4xf32> layouts <{{.*}}> -> <grid [1, 2, 2, 1, 4] axes [-, d1, d2, d4] tile [1, 1, 3, 5]> view affine_map<(d0, d1, d2, d3) -> (0, ((d1 * 2) + (d3 floordiv 9)), {{.*}} guard
// CORE:        core.kernel "conv:2" {{.*}} ins(%[[WIN]],
// CHIP:        chip.superstep "conv:2/relayout" {
// CHIP-NEXT:   } exchange {
// CHIP-NEXT:     core.relayout "conv:2/relayout"
// CHIP:        chip.superstep "conv:2" {
// CHIP-NEXT:     core.kernel "conv:2"

// The simulator runs the window relayout as an exchange before the contraction.
// SIM: conv:2/relayout  relayout
// SIM: conv:2           contraction
// SIM: conv:6/relayout  relayout
