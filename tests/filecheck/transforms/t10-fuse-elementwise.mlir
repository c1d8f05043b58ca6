// RUN: t10-opt %s -p t10-fuse-elementwise --split-input-file | filecheck %s

// A bias add read by a ReLU fuses into one generic: the ReLU reads the add's inputs through
// the add's maps, and its body computes the add first.
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e0 : tensor<4x8xf32>) attrs = {t10.name = "add"} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) attrs = {t10.name = "relu"} {
  ^bb0(%v: f32, %o: f32):
    %z = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK:      %e1 = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) attrs =  {t10.name = "add+relu"} {
// CHECK-NEXT: ^bb0(%0: f32, %1: f32, %2: f32):
// CHECK-NEXT:   %s = arith.addf %0, %1 : f32
// CHECK-NEXT:   %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %m = arith.maximumf %s, %z : f32
// CHECK-NEXT:   linalg.yield %m : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: func.return %r : tensor<4x8xf32>

// -----

// A producer read twice, or read broadcast (it would be recomputed), stays apart; so does a
// contraction consumer.
func.func @main(%x: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) attrs = {t10.name = "neg"} {
  ^bb0(%p: f32, %o: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n : tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) attrs = {t10.name = "bcast"} {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  func.return %b, %n : tensor<4x8xf32>, tensor<8xf32>
}

// CHECK:     t10.name = "neg"
// CHECK:     t10.name = "bcast"
// CHECK-NOT: +

// -----

// The longer body is kept and the other moved into it: here the producer's, whose inputs
// the consumer reads in the other order (b before a). The fused op reads them in the
// consumer's order, and the producer's body reads each through its new argument.
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e0 : tensor<8xf32>) attrs = {t10.name = "p"} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    %t = arith.mulf %s, %s : f32
    %u = arith.negf %t : f32
    linalg.yield %u : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b, %p, %a : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) attrs = {t10.name = "c"} {
  ^bb0(%v: f32, %w: f32, %z: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    %q = arith.addf %r, %z : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  func.return %c : tensor<8xf32>
}

// CHECK:      {{//}} -----
// CHECK:      %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b, %a : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) attrs =  {t10.name = "p+c"} {
// CHECK-NEXT: ^bb0(%0: f32, %1: f32, %2: f32):
// CHECK-NEXT:   %s = arith.subf %1, %0 : f32
// CHECK-NEXT:   %t = arith.mulf %s, %s : f32
// CHECK-NEXT:   %u = arith.negf %t : f32
// CHECK-NEXT:   %r = arith.addf %0, %u : f32
// CHECK-NEXT:   %q = arith.addf %r, %1 : f32
// CHECK-NEXT:   linalg.yield %q : f32
// CHECK-NEXT: } -> tensor<8xf32>
