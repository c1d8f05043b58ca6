// RUN: t10-opt %s -p t10-inline-splats --split-input-file | filecheck %s

// An exported attention mask, (1 - m) · float32-min: both one-value constants become body
// constants (kept at float32 whatever the program's precision) and, unused, are erased.
func.func @main(%m: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %one = arith.constant dense<1.000000e+00> : tensor<1xf32>
  %min = arith.constant dense<-3.40282347e+38> : tensor<f32>
  %e0 = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%one, %m, %min : tensor<1xf32>, tensor<2x4xf32>, tensor<f32>) outs(%e0 : tensor<2x4xf32>) attrs = {t10.name = "mask"} {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %p = arith.mulf %s, %c : f32
    linalg.yield %p : f32
  } -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// CHECK:      func.func @main(%m: tensor<2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT:   %e0 = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:   %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) attrs =  {t10.name = "mask"} {
// CHECK-NEXT:   ^bb0(%b: f32, %o: f32):
// CHECK-NEXT:     %0 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:     %1 = arith.constant -3.40282347e+38 : f32
// CHECK-NEXT:     %s = arith.subf %0, %b : f32
// CHECK-NEXT:     %p = arith.mulf %s, %1 : f32
// CHECK-NEXT:     linalg.yield %p : f32
// CHECK-NEXT:   } -> tensor<2x4xf32>
// CHECK-NEXT:   func.return %r : tensor<2x4xf32>

// -----

// A constant of more than one value, a planned generic, a reduction and a generic whose
// every input is a constant keep their operands; a splat still read elsewhere stays.
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<4xf32>) {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %eps = arith.constant dense<1.000000e-12> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<2x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<2x4xf32>, tensor<4xf32>) outs(%e0 : tensor<2x4xf32>) attrs = {t10.name = "weights"} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %eps : tensor<2x4xf32>, tensor<4xf32>) outs(%e1 : tensor<2x4xf32>) attrs = {t10.name = "pinned", t10.plan = #rtensor.plan<grid [1, 1]>} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<2xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%eps : tensor<4xf32>) outs(%z : tensor<2xf32>) attrs = {t10.name = "sum"} {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%eps : tensor<4xf32>) outs(%e2 : tensor<4xf32>) attrs = {t10.name = "negate"} {
  ^bb0(%p: f32, %o: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %a, %b, %c, %d : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<4xf32>
}

// CHECK:      %w = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %eps = arith.constant dense<1.000000e-12> : tensor<4xf32>
// CHECK:      ins(%x, %w : tensor<2x4xf32>, tensor<4xf32>)
// CHECK:      ins(%x, %eps : tensor<2x4xf32>, tensor<4xf32>)
// CHECK-SAME: t10.plan = #rtensor.plan<grid [1, 1]>
// CHECK:      ins(%eps : tensor<4xf32>) outs(%z : tensor<2xf32>)
// CHECK:      ins(%eps : tensor<4xf32>) outs(%e2 : tensor<4xf32>)

// -----

// In fp16 programs too the body constant is the float32 value: here one that fp16 would
// round to 0 as a tensor.
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %eps = arith.constant dense<1.000000e-12> : tensor<8xf32>
  %e0 = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %eps : tensor<8xf32>, tensor<8xf32>) outs(%e0 : tensor<8xf32>) attrs = {t10.name = "eps"} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// CHECK:      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) attrs =  {t10.name = "eps"} {
// CHECK-NEXT: ^bb0(%p: f32, %o: f32):
// CHECK-NEXT:   %0 = arith.constant 1.000000e-12 : f32
// CHECK-NEXT:   %s = arith.addf %p, %0 : f32

// -----

// An epilogue mark names its input by position: it follows that input.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %z = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%z : tensor<2x4xf32>) attrs = {t10.name = "mm"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %half = arith.constant dense<5.000000e-01> : tensor<1xf32>
  %e0 = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%half, %c : tensor<1xf32>, tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) attrs = {t10.name = "scale", t10.epilogue = 1 : i64} {
  ^bb0(%h: f32, %v: f32, %o: f32):
    %s = arith.mulf %h, %v : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// CHECK:      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) attrs =  {t10.name = "scale", t10.epilogue = 0 : i64} {
