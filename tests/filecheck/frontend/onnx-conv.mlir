// RUN: %python %S/Inputs/conv_model.py %t.onnx
// RUN: t10-opt %t.onnx | filecheck %s
// RUN: t10-opt %t.onnx | t10-opt | filecheck %s
// RUN: t10-opt %t.onnx -p 't10-plan-search{chip=test-16},convert-linalg-to-rtensor' | filecheck %s --check-prefix=RTENSOR
// RUN: t10-opt %t.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=SIM

// A patchify Conv (kernel_shape == strides = [4, 4], no padding) of a [1, 2, 9, 8] image: the
// weight [3, 2, 4, 4] becomes a [C·kh·kw, O] = [32, 3] constant at compile time.
// CHECK:      %w_as_patch_matrix = arith.constant dense<{{.*}}> : tensor<32x3xf32>
// CHECK-NEXT: %b = arith.constant

// ONNX floors 9 / 4: a Slice-like view drops the last row; then the views cut the image into
// patches: split H and W into (patch, offset), move the patch indices first, flatten to
// [N, patches, C·kh·kw].
// CHECK-NEXT: %0 = rtensor.view "patchify:0" %x map affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : tensor<1x2x9x8xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT: %1 = rtensor.view "patchify:1" %0 map affine_map<(d0, d1, d2, d3, d4, d5) -> (0, d1, ((d2 * 4) + d3), ((d4 * 4) + d5))> : tensor<1x2x8x8xf32> -> tensor<1x2x2x4x2x4xf32>
// CHECK-NEXT: %2 = rtensor.view "patchify:2" %1 map affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1, d4, d2, d5)> : tensor<1x2x2x4x2x4xf32> -> tensor<1x2x2x2x4x4xf32>
// CHECK-NEXT: %3 = rtensor.view "patchify:3" %2 map affine_map<(d0, d1, d2) -> (0, (d1 floordiv 2), (d1 mod 2), (d2 floordiv 16), ((d2 floordiv 4) mod 4), (d2 mod 4))> : tensor<1x2x2x2x4x4xf32> -> tensor<1x4x32xf32>

// One contraction of the patches with the weight matrix (batch, patch, channel; k reduced) ...
// CHECK-NEXT: %4 = arith.constant dense<0.000000e+00> : tensor<1x4x3xf32>
// CHECK-NEXT: %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%3, %w_as_patch_matrix : tensor<1x4x32xf32>, tensor<32x3xf32>) outs(%4 : tensor<1x4x3xf32>) attrs = {t10.name = "patchify:4"} {
// CHECK:        arith.mulf
// CHECK-NEXT:   arith.addf
// CHECK:      } -> tensor<1x4x3xf32>

// ... the bias added per output channel ...
// CHECK:      %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %b : tensor<1x4x3xf32>, tensor<3xf32>) {{.*}} {t10.name = "patchify:5"}

// ... and views back to NCHW.
// CHECK:      rtensor.view "patchify:6" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, ((d1 * 2) + d2), d3)> : tensor<1x4x3xf32> -> tensor<1x2x2x3xf32>
// CHECK-NEXT: %y = rtensor.view "patchify:7" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)> : tensor<1x2x2x3xf32> -> tensor<1x3x2x2xf32>
// CHECK-NEXT: func.return %y : tensor<1x3x2x2xf32>

// The four views in front of the contraction fold into one relayout of the image with the
// composed map; the two after the bias add into the relayout that returns the result.
// RTENSOR:     rtensor.relayout "patchify:4/relayout" %{{.*}} map affine_map<(d0, d1, d2) -> (0, (d2 floordiv 16), (((d1 floordiv 2) * 4) + ((d2 floordiv 4) mod 4)), (((d1 mod 2) * 4) + (d2 mod 4)))>
// RTENSOR:     rtensor.generic "patchify:4"
// RTENSOR:     rtensor.generic "patchify:5"
// RTENSOR:     rtensor.relayout "patchify:7/relayout" %{{.*}} map affine_map<(d0, d1, d2, d3) -> (0, ((d2 * 2) + d3), d1)>
// RTENSOR-NOT: rtensor.view

// t10-compile runs the bias add as the contraction's epilogue (t10-fuse-epilogue).
// SIM: patchify:4+patchify:5/relayout  relayout
// SIM: patchify:4+patchify:5           contraction
// SIM: patchify:7/relayout  relayout
