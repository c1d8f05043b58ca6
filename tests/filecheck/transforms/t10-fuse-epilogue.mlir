// RUN: t10-opt %s -p t10-fuse-epilogue --split-input-file | filecheck %s
// RUN: t10-opt %s -p 't10-fuse-epilogue{always=true}' --split-input-file | filecheck %s --check-prefix=ALWAYS

// A bias add that alone reads a matmul, at the identity map, becomes its epilogue: the add is
// marked with the input that reads the matmul (1), and the matmul takes both names.
func.func @main(%x: tensor<4x8xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<4x6xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z : tensor<4x6xf32>) attrs = {t10.name = "mm"} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b, %mm : tensor<6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) attrs = {t10.name = "add"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK:      %mm = linalg.generic {{.*}} attrs = {t10.name = "mm+add"}
// CHECK:      %y = linalg.generic {{.*}} ins(%b, %mm : tensor<6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) attrs = {t10.name = "add", t10.epilogue = 1 : i64}

// -----

// Left alone: a matmul whose result is also returned (the epilogue would overwrite it), and
// an add that reads its matmul transposed (its tile lies on other cores).
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %z = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
  %m1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) attrs = {t10.name = "returned"} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %n1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m1 : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) attrs = {t10.name = "neg1"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %m2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) attrs = {t10.name = "transposed"} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %n2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m2 : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) attrs = {t10.name = "neg2"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  func.return %m1, %n1, %n2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-NOT: t10.epilogue
// CHECK:     attrs = {t10.name = "returned"}
// CHECK:     attrs = {t10.name = "neg1"}
// CHECK:     attrs = {t10.name = "transposed"}
// CHECK:     attrs = {t10.name = "neg2"}

// -----

// Left alone: an add whose other input is computed after the matmul (the epilogue runs when
// the matmul ends, before that input exists).
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %z = arith.constant dense<0.000000e+00> : tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) attrs = {t10.name = "mm"} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %later = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) attrs = {t10.name = "later"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %later : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) attrs = {t10.name = "add"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// CHECK-NOT: t10.epilogue
// CHECK:     attrs = {t10.name = "mm"}
// CHECK:     attrs = {t10.name = "add"}

// -----

// Where it does not pay, left alone: on ipu-mk2 this 1024x768x768 matmul is fastest with its
// k split over 6 cores, so each of the 6 cores that hold an output tile would need the
// residual %r (computed on chip) for the whole tile, where the add alone spreads it over
// the chip (`always=true` marks it anyway).
func.func @main(%x: tensor<1024x768xf32>) -> tensor<1024x768xf32> {
  %w = arith.constant dense<1.000000e+00> : tensor<768x768xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<1024x768xf32>
  %e0 = tensor.empty() : tensor<1024x768xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1024x768xf32>) outs(%e0 : tensor<1024x768xf32>) attrs = {t10.name = "residual"} {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<1024x768xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1024x768xf32>, tensor<768x768xf32>) outs(%z : tensor<1024x768xf32>) attrs = {t10.name = "proj"} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x768xf32>
  %e = tensor.empty() : tensor<1024x768xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %r : tensor<1024x768xf32>, tensor<1024x768xf32>) outs(%e : tensor<1024x768xf32>) attrs = {t10.name = "add"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1024x768xf32>
  func.return %y : tensor<1024x768xf32>
}

// CHECK:        attrs = {t10.name = "proj"}
// CHECK:        attrs = {t10.name = "add"}
// ALWAYS:       attrs = {t10.name = "proj+add"}
// ALWAYS:       attrs = {t10.name = "add", t10.epilogue = 0 : i64}
