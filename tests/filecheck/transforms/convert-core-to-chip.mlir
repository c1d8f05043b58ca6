// RUN: t10-opt %s -p convert-core-to-chip --split-input-file | filecheck %s

// The function body becomes one chip.program; each kernel opens a superstep whose exchange
// phase takes the shifts after it; a transfer with no kernel before it (the all_reduce) gets
// a superstep with an empty compute phase.
func.func @main(%x: tensor<4x6xf32> {t10.name = "x"}, %w: tensor<6x4xf32> {t10.name = "w"}) -> (tensor<4x4xf32> {t10.name = "y"}, tensor<4x4xf32> {t10.name = "y2"}) {
  %0 = core.alloc "w" on 4 : !core.buffer<3x2xf32>
  core.load %w into %0 layout <grid [1, 2, 2] axes [d2, d1] tile [3, 2]> : tensor<6x4xf32>, !core.buffer<3x2xf32>
  %1 = core.alloc "x" on 4 : !core.buffer<4x3xf32>
  core.load %x into %1 layout <grid [1, 2, 2] axes [-, d2] tile [4, 3]> : tensor<4x6xf32>, !core.buffer<4x3xf32>
  %2 = core.alloc "w" on 4 : !core.buffer<6x2xf32>
  core.load %w into %2 layout <grid [2, 2, 1] axes [-, d1] tile [6, 2] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<6x4xf32>, !core.buffer<6x2xf32>
  %3 = core.alloc "x" on 4 : !core.buffer<2x6xf32>
  core.load %x into %3 layout <grid [2, 2, 1] axes [d0, -] tile [2, 6] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]> : tensor<4x6xf32>, !core.buffer<2x6xf32>
  %mm = core.alloc "cannon" on 4 : !core.buffer<2x2xf32>
  %mm_1 = arith.constant 0 : index
  %mm_2 = core.coord 1 of [2, 2, 1]
  %mm_3 = arith.constant 2 : index
  %mm_4 = arith.remui %mm_2, %mm_3 : index
  %mm_5 = core.coord 0 of [2, 2, 1]
  %mm_6 = arith.remui %mm_5, %mm_3 : index
  %mm_7 = arith.addi %mm_4, %mm_6 : index
  %mm_8 = arith.remui %mm_7, %mm_3 : index
  %mm_9 = arith.constant 3 : index
  %mm_10 = arith.constant 1 : index
  scf.for %4 = %mm_1 to %mm_10 step %mm_10 {
    %5 = arith.addi %mm_8, %4 : index
    %6 = arith.remui %5, %mm_3 : index
    %7 = arith.muli %6, %mm_9 : index
    %8 = arith.addi %5, %mm_10 : index
    %9 = arith.remui %8, %mm_3 : index
    %10 = arith.muli %9, %mm_9 : index
    core.kernel "cannon" on [2, 2, 1] sizes [2, 2, 3] of [4, 4, 6] ins(%3, %2) outs(%mm) at(%7, %7, %mm_1) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x6xf32>, !core.buffer<6x2xf32>) -> !core.buffer<2x2xf32> {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    core.shift %3 ring 1 x 2 of [2, 2, 1] dim 1 size 3 from %7 to %10 : !core.buffer<2x6xf32>
    core.shift %2 ring 0 x 2 of [2, 2, 1] dim 0 size 3 from %7 to %10 : !core.buffer<6x2xf32>
  }
  %mm_11 = arith.addi %mm_8, %mm_10 : index
  %mm_12 = arith.remui %mm_11, %mm_3 : index
  %mm_13 = arith.muli %mm_12, %mm_9 : index
  core.kernel "cannon" on [2, 2, 1] sizes [2, 2, 3] of [4, 4, 6] ins(%3, %2) outs(%mm) at(%mm_13, %mm_13, %mm_1) along [1, 0, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x6xf32>, !core.buffer<6x2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%a_1: f32, %b_1: f32, %acc_1: f32):
    %p_1 = arith.mulf %a_1, %b_1 : f32
    %s_1 = arith.addf %acc_1, %p_1 : f32
    linalg.yield %s_1 : f32
  }
  core.free %3 : !core.buffer<2x6xf32>
  core.free %2 : !core.buffer<6x2xf32>
  %mm_14 = core.store %mm layout <grid [2, 2, 1] axes [d0, d1] tile [2, 2]> : !core.buffer<2x2xf32> -> tensor<4x4xf32>
  core.free %mm : !core.buffer<2x2xf32>
  %mm2 = core.alloc "split_k" on 4 : !core.buffer<4x2xf32>
  %mm2_1 = arith.constant 0 : index
  core.kernel "split_k" on [1, 2, 2] sizes [4, 2, 3] of [4, 4, 6] ins(%1, %0) outs(%mm2) at(%mm2_1, %mm2_1, %mm2_1) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<4x3xf32>, !core.buffer<3x2xf32>) -> !core.buffer<4x2xf32> {
  ^bb0(%a_2: f32, %b_2: f32, %acc_2: f32):
    %p_2 = arith.mulf %a_2, %b_2 : f32
    %s_2 = arith.addf %acc_2, %p_2 : f32
    linalg.yield %s_2 : f32
  }
  core.free %1 : !core.buffer<4x3xf32>
  core.free %0 : !core.buffer<3x2xf32>
  core.all_reduce "sum" %mm2 over [2] of [1, 2, 2] : !core.buffer<4x2xf32>
  %mm2_2 = core.store %mm2 layout <grid [1, 2, 2] axes [-, d1] tile [4, 2]> : !core.buffer<4x2xf32> -> tensor<4x4xf32>
  core.free %mm2 : !core.buffer<4x2xf32>
  func.return %mm_14, %mm2_2 : tensor<4x4xf32>, tensor<4x4xf32>
}


// CHECK:      %0, %1 = chip.program "main" on 4 -> tensor<4x4xf32>, tensor<4x4xf32> {
// CHECK:        scf.for
// CHECK:          chip.superstep "cannon" {
// CHECK-NEXT:       core.kernel "cannon"
// CHECK:          } exchange {
// CHECK-NEXT:       core.shift
// CHECK-NEXT:       core.shift
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK:        chip.superstep "cannon" {
// CHECK-NEXT:     core.kernel "cannon"
// CHECK:        } exchange {
// CHECK-NEXT:   }
// CHECK:        chip.superstep "split_k" {
// CHECK-NEXT:     core.kernel "split_k"
// CHECK:        chip.superstep "split_k" {
// CHECK-NEXT:   } exchange {
// CHECK-NEXT:     core.all_reduce "sum" %{{.*}} over [2] of [1, 2, 2] : !core.buffer<4x2xf32>
// CHECK-NEXT:   }
// CHECK:        chip.yield %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>

// -----

// An epilogue kernel right after its operator's last kernel (nothing exchanged in between)
// joins that superstep's compute phase; the index constant it reads moves up before it.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}, %b: tensor<6xf32> {t10.name = "b"}) -> (tensor<4x6xf32> {t10.name = "y"}) {
  %0 = core.alloc "b" on 6 : !core.buffer<2xf32>
  core.load %b into %0 layout <grid [2, 3, 1] axes [d1] tile [2]> : tensor<6xf32>, !core.buffer<2xf32>
  %1 = core.alloc "x" on 6 : !core.buffer<2x8xf32>
  core.load %x into %1 layout <grid [2, 3, 1] axes [d0, -] tile [2, 8]> : tensor<4x8xf32>, !core.buffer<2x8xf32>
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %2 = core.alloc "mm+add/in1" on 6 : !core.buffer<8x2xf32>
  core.load %w into %2 layout <grid [2, 3, 1] axes [-, d1] tile [8, 2]> : tensor<8x6xf32>, !core.buffer<8x2xf32>
  %3 = core.alloc "mm+add" on 6 : !core.buffer<2x2xf32>
  %4 = arith.constant 0 : index
  core.kernel "mm+add" on [2, 3, 1] sizes [2, 2, 8] of [4, 6, 8] ins(%1, %2) outs(%3) at(%4, %4, %4) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x8xf32>, !core.buffer<8x2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  core.free %1 : !core.buffer<2x8xf32>
  %5 = arith.constant 0 : index
  core.kernel "mm+add" on [2, 3, 1] axes [0, 1] sizes [2, 2] of [4, 6] ins(%3, %0) outs(%3) at(%5, %5, %5) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s_1 = arith.addf %u, %v : f32
    linalg.yield %s_1 : f32
  }
  core.free %0 : !core.buffer<2xf32>
  %y = core.store %3 layout <grid [2, 3, 1] axes [d0, d1] tile [2, 2]> : !core.buffer<2x2xf32> -> tensor<4x6xf32>
  core.free %3 : !core.buffer<2x2xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK:         chip.program "main" on 6
// CHECK:         chip.superstep "mm+add" {
// CHECK-NEXT:      core.kernel "mm+add" on [2, 3, 1] sizes
// CHECK:           core.kernel "mm+add" on [2, 3, 1] axes [0, 1] sizes
// CHECK:         } exchange {
// CHECK-NEXT:    }
// CHECK-NOT:     chip.superstep
// CHECK:         chip.yield

// -----

// After an all_reduce the epilogue runs between its reduce-scatter (a superstep of its own)
// and the all_gather, which forms the exchange phase of the epilogue's superstep.
func.func @main(%x: tensor<4x8xf32> {t10.name = "x"}, %b: tensor<6xf32> {t10.name = "b"}) -> (tensor<4x6xf32> {t10.name = "y"}) {
  %0 = core.alloc "b" on 12 : !core.buffer<2xf32>
  core.load %b into %0 layout <grid [2, 3, 2] axes [d1] tile [2]> : tensor<6xf32>, !core.buffer<2xf32>
  %1 = core.alloc "x" on 12 : !core.buffer<2x4xf32>
  core.load %x into %1 layout <grid [2, 3, 2] axes [d0, d2] tile [2, 4]> : tensor<4x8xf32>, !core.buffer<2x4xf32>
  %w = arith.constant dense<1.000000e+00> : tensor<8x6xf32>
  %2 = core.alloc "mm+add/in1" on 12 : !core.buffer<4x2xf32>
  core.load %w into %2 layout <grid [2, 3, 2] axes [d2, d1] tile [4, 2]> : tensor<8x6xf32>, !core.buffer<4x2xf32>
  %3 = core.alloc "mm+add" on 12 : !core.buffer<2x2xf32>
  %4 = arith.constant 0 : index
  core.kernel "mm+add" on [2, 3, 2] sizes [2, 2, 4] of [4, 6, 8] ins(%1, %2) outs(%3) at(%4, %4, %4) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  core.free %1 : !core.buffer<2x4xf32>
  core.all_reduce "sum" %3 over [2] of [2, 3, 2] scatter : !core.buffer<2x2xf32>
  %5 = arith.constant 0 : index
  core.kernel "mm+add" on [2, 3, 2] axes [0, 1] scatter sizes [2, 2] of [4, 6] ins(%3, %0) outs(%3) at(%5, %5, %5) along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<2x2xf32>, !core.buffer<2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s_1 = arith.addf %u, %v : f32
    linalg.yield %s_1 : f32
  }
  core.free %0 : !core.buffer<2xf32>
  core.all_gather %3 over [2] of [2, 3, 2] : !core.buffer<2x2xf32>
  %y = core.store %3 layout <grid [2, 3, 2] axes [d0, d1] tile [2, 2]> : !core.buffer<2x2xf32> -> tensor<4x6xf32>
  core.free %3 : !core.buffer<2x2xf32>
  func.return %y : tensor<4x6xf32>
}

// CHECK:         chip.program "main" on 12
// CHECK:         chip.superstep "mm+add" {
// CHECK-NEXT:      core.kernel "mm+add" on [2, 3, 2] sizes
// CHECK:         chip.superstep "mm+add" {
// CHECK-NEXT:    } exchange {
// CHECK-NEXT:      core.all_reduce "sum" %{{.*}} over [2] of [2, 3, 2] scatter
// CHECK-NEXT:    }
// CHECK:         chip.superstep "mm+add" {
// CHECK-NEXT:      core.kernel "mm+add" on [2, 3, 2] axes [0, 1] scatter sizes
// CHECK:         } exchange {
// CHECK-NEXT:      core.all_gather %{{.*}} over [2] of [2, 3, 2]
// CHECK-NEXT:    }

// -----

// A relayout is a superstep of its own, under its own label, with an empty compute phase:
// it does not join the exchange phase of the kernel right before it.
func.func @main(%x: tensor<4x2xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %0 = core.alloc "x" on 8 : !core.buffer<1x1xf32>
  core.load %x into %0 layout <grid [4, 2] axes [d0, d1] tile [1, 1]> : tensor<4x2xf32>, !core.buffer<1x1xf32>
  %a = core.alloc "n1" on 8 : !core.buffer<1x1xf32>
  %t = core.alloc "t" on 8 : !core.buffer<1x1xf32>
  %zero = arith.constant 0 : index
  core.kernel "n1" on [4, 2] sizes [1, 1] of [4, 2] ins(%0) outs(%a) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]} : (!core.buffer<1x1xf32>) -> !core.buffer<1x1xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.negf %1 : f32
    linalg.yield %3 : f32
  }
  core.relayout "t" %a to %t of tensor<4x2xf32> layouts <grid [4, 2] axes [d0, d1] tile [1, 1]> -> <grid [2, 4] axes [d0, d1] tile [1, 1]> view affine_map<(d0, d1) -> (d1, d0)> as tensor<2x4xf32> : !core.buffer<1x1xf32>, !core.buffer<1x1xf32>
  %y = core.store %t layout <grid [2, 4] axes [d0, d1] tile [1, 1]> : !core.buffer<1x1xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<4x2xf32>
// CHECK-NEXT:    %[[PROG:.*]] = chip.program "main" on 8 -> tensor<2x4xf32> {
// CHECK:           %[[T:.*]] = core.alloc "t" on 8 : !core.buffer<1x1xf32>
// CHECK:           chip.superstep "n1" {
// CHECK-NEXT:        core.kernel "n1"
// CHECK:           } exchange {
// CHECK-NEXT:      }
// CHECK-NEXT:      chip.superstep "t" {
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:        core.relayout "t" %a to %[[T]] of tensor<4x2xf32> layouts <grid [4, 2] axes [d0, d1] tile [1, 1]> -> <grid [2, 4] axes [d0, d1] tile [1, 1]> view affine_map<(d0, d1) -> (d1, d0)> as tensor<2x4xf32> : !core.buffer<1x1xf32>, !core.buffer<1x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %y = core.store %[[T]]
// CHECK-NEXT:      chip.yield %y : tensor<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[PROG]] : tensor<2x4xf32>

// -----

// A gather is a superstep of its own too (its exchange phase), after the kernel that makes
// its ids; the program runs on the most cores any buffer is allocated on.
func.func @main(%ids: tensor<2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %0 = core.alloc "ids" on 2 : !core.buffer<1xf32>
  core.load %ids into %0 layout <grid [2] axes [d0] tile [1]> : tensor<2xf32>, !core.buffer<1xf32>
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %1 = core.alloc "embed/in0" on 4 : !core.buffer<1x2xf32>
  core.load %table into %1 layout <grid [4] axes [d0, -] tile [1, 2]> : tensor<4x2xf32>, !core.buffer<1x2xf32>
  %n = core.alloc "n0" on 2 : !core.buffer<1xf32>
  %2 = core.alloc "embed" on 4 : !core.buffer<1x1xf32>
  %zero = arith.constant 0 : index
  core.kernel "n0" on [2] sizes [1] of [2] ins(%0) outs(%n) at(%zero, %zero) along [-1, -1] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>]} : (!core.buffer<1xf32>) -> !core.buffer<1xf32> {
  ^bb0(%3: f32, %4: f32):
    %5 = arith.negf %3 : f32
    linalg.yield %5 : f32
  }
  core.gather "embed" %1[%n] to %2 axis 0 of tensor<4x2xf32>[tensor<2xf32>] -> tensor<2x2xf32> layouts <grid [4] axes [d0, -] tile [1, 2]>, <grid [2] axes [d0] tile [1]> -> <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x2xf32>, !core.buffer<1xf32>, !core.buffer<1x1xf32>
  %y = core.store %2 layout <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x1xf32> -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids: tensor<2xf32>
// CHECK-NEXT:    %[[PROG:.*]] = chip.program "main" on 4 -> tensor<2x2xf32> {
// CHECK:           %[[TABLE:.*]] = core.alloc "embed/in0" on 4
// CHECK:           %[[N:.*]] = core.alloc "n0" on 2
// CHECK-NEXT:      %[[OUT:.*]] = core.alloc "embed" on 4 : !core.buffer<1x1xf32>
// CHECK:           chip.superstep "n0" {
// CHECK-NEXT:        core.kernel "n0"
// CHECK:           } exchange {
// CHECK-NEXT:      }
// CHECK-NEXT:      chip.superstep "embed" {
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:        core.gather "embed" %[[TABLE]][%[[N]]] to %[[OUT]] axis 0 of tensor<4x2xf32>[tensor<2xf32>] -> tensor<2x2xf32> layouts <grid [4] axes [d0, -] tile [1, 2]>, <grid [2] axes [d0] tile [1]> -> <grid [2, 2] axes [d0, d1] tile [1, 1]> : !core.buffer<1x2xf32>, !core.buffer<1xf32>, !core.buffer<1x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %y = core.store %[[OUT]]
// CHECK-NEXT:      chip.yield %y : tensor<2x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[PROG]] : tensor<2x2xf32>

// -----

// So is a GatherElements (any kind of gather).
func.func @main(%ids: tensor<2x2xf32> {t10.name = "ids"}) -> (tensor<2x2xf32> {t10.name = "y"}) {
  %0 = core.alloc "ids" on 2 : !core.buffer<1x2xf32>
  core.load %ids into %0 layout <grid [2] axes [d0, -] tile [1, 2]> : tensor<2x2xf32>, !core.buffer<1x2xf32>
  %table = arith.constant dense<1.000000e+00> : tensor<4x2xf32>
  %1 = core.alloc "choose/in0" on 4 : !core.buffer<1x2xf32>
  core.load %table into %1 layout <grid [4] axes [d0, -] tile [1, 2]> : tensor<4x2xf32>, !core.buffer<1x2xf32>
  %2 = core.alloc "choose" on 2 : !core.buffer<1x2xf32>
  core.gather "choose" %1[%0] to %2 elements axis 0 of tensor<4x2xf32>[tensor<2x2xf32>] -> tensor<2x2xf32> layouts <grid [4] axes [d0, -] tile [1, 2]>, <grid [2] axes [d0, -] tile [1, 2]> -> <grid [2] axes [d0, -] tile [1, 2]> : !core.buffer<1x2xf32>, !core.buffer<1x2xf32>, !core.buffer<1x2xf32>
  %y = core.store %2 layout <grid [2] axes [d0, -] tile [1, 2]> : !core.buffer<1x2xf32> -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @main(%ids: tensor<2x2xf32>
// CHECK-NEXT:    %[[PROG:.*]] = chip.program "main" on 4 -> tensor<2x2xf32> {
// CHECK:           chip.superstep "choose" {
// CHECK-NEXT:      } exchange {
// CHECK-NEXT:        core.gather "choose" %{{.*}}[%{{.*}}] to %{{.*}} elements axis 0 of tensor<4x2xf32>[tensor<2x2xf32>] -> tensor<2x2xf32>
// CHECK-NEXT:      }

// -----

// An output-rotating operator (k on a ring of 2 cores, n in 4 steps): every step but the
// last is a superstep whose compute phase runs the kernel (adding into the output's slot)
// and whose exchange phase shifts the output's partial chunk; the last step's superstep
// exchanges nothing, and no all_reduce follows.
func.func @main(%x: tensor<2x4xf32> {t10.name = "x"}, %w: tensor<4x8xf32> {t10.name = "w"}) -> (tensor<2x8xf32> {t10.name = "y"}) {
  %0 = core.alloc "w" on 4 : !core.buffer<2x4xf32>
  core.load %w into %0 layout <grid [1, 2, 2] axes [d2, d1] tile [2, 4]> : tensor<4x8xf32>, !core.buffer<2x4xf32>
  %1 = core.alloc "x" on 4 : !core.buffer<2x2xf32>
  core.load %x into %1 layout <grid [1, 2, 2] axes [-, d2] tile [2, 2]> : tensor<2x4xf32>, !core.buffer<2x2xf32>
  %mm = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
  %mm_1 = arith.constant 0 : index
  %mm_2 = core.coord 2 of [1, 2, 2]
  %mm_3 = arith.constant 2 : index
  %mm_4 = arith.remui %mm_2, %mm_3 : index
  %mm_5 = arith.muli %mm_4, %mm_3 : index
  %mm_6 = arith.constant 4 : index
  %mm_7 = arith.remui %mm_5, %mm_6 : index
  %mm_8 = core.coord 1 of [1, 2, 2]
  %mm_9 = arith.muli %mm_8, %mm_6 : index
  %mm_10 = arith.constant 3 : index
  %mm_11 = arith.constant 1 : index
  scf.for %2 = %mm_1 to %mm_10 step %mm_11 {
    %3 = arith.addi %mm_7, %2 : index
    %4 = arith.remui %3, %mm_6 : index
    %5 = arith.addi %mm_9, %4 : index
    %6 = arith.remui %3, %mm_10 : index
    %7 = arith.addi %3, %mm_3 : index
    %8 = arith.remui %7, %mm_10 : index
    core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%1, %0) outs(%mm) at(%mm_1, %4, %6) along [-1, 1, 1] origin %5 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    core.shift %mm ring 2 x 2 of [1, 2, 2] dim 1 size 1 from %6 to %8 : !core.buffer<2x3xf32>
  }
  %mm_12 = arith.addi %mm_7, %mm_10 : index
  %mm_13 = arith.remui %mm_12, %mm_6 : index
  %mm_14 = arith.addi %mm_9, %mm_13 : index
  %mm_15 = arith.remui %mm_12, %mm_10 : index
  core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%1, %0) outs(%mm) at(%mm_1, %mm_13, %mm_15) along [-1, 1, 1] origin %mm_14 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x2xf32>, !core.buffer<2x4xf32>) -> !core.buffer<2x3xf32> {
  ^bb0(%a_1: f32, %b_1: f32, %acc_1: f32):
    %p_1 = arith.mulf %a_1, %b_1 : f32
    %s_1 = arith.addf %acc_1, %p_1 : f32
    linalg.yield %s_1 : f32
  }
  core.free %1 : !core.buffer<2x2xf32>
  core.free %0 : !core.buffer<2x4xf32>
  %mm_16 = core.store %mm layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> : !core.buffer<2x3xf32> -> tensor<2x8xf32>
  core.free %mm : !core.buffer<2x3xf32>
  func.return %mm_16 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = chip.program "main" on 4 -> tensor<2x8xf32> {
// CHECK:           %[[OUT:.*]] = core.alloc "mm" on 4 : !core.buffer<2x3xf32>
// CHECK:           scf.for
// CHECK:             chip.superstep "mm" {
// CHECK-NEXT:          core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%{{.*}}, %{{.*}}) outs(%[[OUT]]) at(%{{.*}}, %{{.*}}, %[[SLOT:.*]]) along [-1, 1, 1] origin %{{.*}} {indexing_maps
// CHECK:             } exchange {
// CHECK-NEXT:          core.shift %[[OUT]] ring 2 x 2 of [1, 2, 2] dim 1 size 1 from %[[SLOT]] to %{{.*}} : !core.buffer<2x3xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK:           chip.superstep "mm" {
// CHECK-NEXT:        core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 8, 4] ins(%{{.*}}, %{{.*}}) outs(%[[OUT]]) at(%{{.*}}, %{{.*}}, %{{.*}}) along [-1, 1, 1] origin %{{.*}} {indexing_maps
// CHECK:           } exchange {
// CHECK-NEXT:      }
// CHECK-NOT:       chip.superstep
// CHECK:           %[[Y:.*]] = core.store %[[OUT]] layout <grid [1, 2, 2] axes [-, d1] tile [2, 4] rotate 1 ring d2 x 2 steps 4 skew [(d2, 2, 2)] phase 3> : !core.buffer<2x3xf32> -> tensor<2x8xf32>
// CHECK-NEXT:      core.free %[[OUT]] : !core.buffer<2x3xf32>
// CHECK-NEXT:      chip.yield %[[Y]] : tensor<2x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : tensor<2x8xf32>
