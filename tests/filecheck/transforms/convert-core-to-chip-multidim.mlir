// RUN: t10-opt %s -p convert-core-to-chip | filecheck %s

// Nested step loops: every kernel opens a superstep; the last inner step of an outer step
// (but the last) exchanges both the inner ring shift of A and the outer one of the output.
func.func @main(%x: tensor<2x8xf32> {t10.name = "x"}) -> (tensor<2x4xf32> {t10.name = "y"}) {
  %0 = core.alloc "x" on 4 : !core.buffer<2x4xf32>
  core.load %x into %0 layout <grid [1, 2, 2] axes [-, d2] tile [2, 4] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1)]> : tensor<2x8xf32>, !core.buffer<2x4xf32>
  %w = arith.constant dense<1.000000e+00> : tensor<8x4xf32>
  %1 = core.alloc "mm/in1" on 4 : !core.buffer<4x2xf32>
  core.load %w into %1 layout <grid [1, 2, 2] axes [d2, d1] tile [4, 2]> : tensor<8x4xf32>, !core.buffer<4x2xf32>
  %mm = core.alloc "mm" on 4 : !core.buffer<2x2xf32>
  %mm_1 = arith.constant 0 : index
  %mm_2 = core.coord 2 of [1, 2, 2]
  %mm_3 = arith.constant 2 : index
  %mm_4 = arith.remui %mm_2, %mm_3 : index
  %mm_5 = arith.remui %mm_4, %mm_3 : index
  %mm_6 = core.coord 1 of [1, 2, 2]
  %mm_7 = arith.remui %mm_6, %mm_3 : index
  %mm_8 = arith.remui %mm_7, %mm_3 : index
  %mm_9 = arith.muli %mm_6, %mm_3 : index
  %mm_10 = arith.constant 1 : index
  scf.for %2 = %mm_1 to %mm_10 step %mm_10 {
    %3 = arith.addi %mm_5, %2 : index
    %4 = arith.remui %3, %mm_3 : index
    %5 = arith.muli %2, %mm_3 : index
    scf.for %6 = %mm_1 to %mm_10 step %mm_10 {
      %7 = arith.addi %5, %6 : index
      %8 = arith.addi %mm_8, %7 : index
      %9 = arith.remui %8, %mm_3 : index
      %10 = arith.addi %mm_9, %4 : index
      %11 = arith.muli %9, %mm_3 : index
      %12 = arith.addi %8, %mm_10 : index
      %13 = arith.remui %12, %mm_3 : index
      %14 = arith.muli %13, %mm_3 : index
      %15 = arith.remui %3, %mm_3 : index
      core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 4, 8] ins(%0, %1) outs(%mm) at(%11, %11, %15) along [1, 0, 1] and(%mm_1, %4, %mm_1) along [-1, 1, -1] origin %10 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }
      core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2 from %11 to %14 : !core.buffer<2x4xf32>
    }
    %16 = arith.addi %5, %mm_10 : index
    %17 = arith.addi %mm_8, %16 : index
    %18 = arith.remui %17, %mm_3 : index
    %19 = arith.addi %mm_9, %4 : index
    %20 = arith.muli %18, %mm_3 : index
    %21 = arith.addi %17, %mm_10 : index
    %22 = arith.remui %21, %mm_3 : index
    %23 = arith.muli %22, %mm_3 : index
    %24 = arith.addi %3, %mm_10 : index
    %25 = arith.remui %24, %mm_3 : index
    core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 4, 8] ins(%0, %1) outs(%mm) at(%20, %20, %4) along [1, 0, 1] and(%mm_1, %4, %mm_1) along [-1, 1, -1] origin %19 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
    ^bb0(%a_1: f32, %b_1: f32, %acc_1: f32):
      %p_1 = arith.mulf %a_1, %b_1 : f32
      %s_1 = arith.addf %acc_1, %p_1 : f32
      linalg.yield %s_1 : f32
    }
    core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2 from %20 to %23 : !core.buffer<2x4xf32>
    core.shift %mm ring 2 x 2 of [1, 2, 2] dim 1 size 1 from %4 to %25 : !core.buffer<2x2xf32>
  }
  %mm_11 = arith.addi %mm_5, %mm_10 : index
  %mm_12 = arith.remui %mm_11, %mm_3 : index
  %mm_13 = arith.muli %mm_10, %mm_3 : index
  scf.for %26 = %mm_1 to %mm_10 step %mm_10 {
    %27 = arith.addi %mm_13, %26 : index
    %28 = arith.addi %mm_8, %27 : index
    %29 = arith.remui %28, %mm_3 : index
    %30 = arith.addi %mm_9, %mm_12 : index
    %31 = arith.muli %29, %mm_3 : index
    %32 = arith.addi %28, %mm_10 : index
    %33 = arith.remui %32, %mm_3 : index
    %34 = arith.muli %33, %mm_3 : index
    %35 = arith.remui %mm_11, %mm_3 : index
    core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 4, 8] ins(%0, %1) outs(%mm) at(%31, %31, %35) along [1, 0, 1] and(%mm_1, %mm_12, %mm_1) along [-1, 1, -1] origin %30 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
    ^bb0(%a_2: f32, %b_2: f32, %acc_2: f32):
      %p_2 = arith.mulf %a_2, %b_2 : f32
      %s_2 = arith.addf %acc_2, %p_2 : f32
      linalg.yield %s_2 : f32
    }
    core.shift %0 ring 1 x 2 of [1, 2, 2] dim 1 size 2 from %31 to %34 : !core.buffer<2x4xf32>
  }
  %mm_14 = arith.addi %mm_13, %mm_10 : index
  %mm_15 = arith.addi %mm_8, %mm_14 : index
  %mm_16 = arith.remui %mm_15, %mm_3 : index
  %mm_17 = arith.addi %mm_9, %mm_12 : index
  %mm_18 = arith.muli %mm_16, %mm_3 : index
  core.kernel "mm" on [1, 2, 2] sizes [2, 1, 2] of [2, 4, 8] ins(%0, %1) outs(%mm) at(%mm_18, %mm_18, %mm_12) along [1, 0, 1] and(%mm_1, %mm_12, %mm_1) along [-1, 1, -1] origin %mm_17 {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]} : (!core.buffer<2x4xf32>, !core.buffer<4x2xf32>) -> !core.buffer<2x2xf32> {
  ^bb0(%a_3: f32, %b_3: f32, %acc_3: f32):
    %p_3 = arith.mulf %a_3, %b_3 : f32
    %s_3 = arith.addf %acc_3, %p_3 : f32
    linalg.yield %s_3 : f32
  }
  core.free %0 : !core.buffer<2x4xf32>
  %mm_19 = core.store %mm layout <grid [1, 2, 2] axes [-, d1] tile [2, 2] rotate 1 ring d2 x 2 steps 2 skew [(d2, 2, 1)] phase 1> : !core.buffer<2x2xf32> -> tensor<2x4xf32>
  core.free %mm : !core.buffer<2x2xf32>
  func.return %mm_19 : tensor<2x4xf32>
}

// CHECK:      scf.for
// CHECK:        scf.for
// CHECK:          chip.superstep "mm" {
// CHECK-NEXT:       core.kernel "mm"
// CHECK:          } exchange {
// CHECK-NEXT:       core.shift %{{.*}} ring 1 x 2
// CHECK-NEXT:     }
// CHECK:        chip.superstep "mm" {
// CHECK-NEXT:     core.kernel "mm"
// CHECK:        } exchange {
// CHECK-NEXT:     core.shift %{{.*}} ring 1 x 2
// CHECK-NEXT:     core.shift %mm ring 2 x 2
// CHECK-NEXT:   }
// CHECK:      scf.for
// CHECK:        chip.superstep "mm" {
// CHECK:        } exchange {
// CHECK-NEXT:     core.shift %{{.*}} ring 1 x 2
// CHECK-NEXT:   }
// CHECK:      chip.superstep "mm" {
// CHECK-NEXT:   core.kernel "mm"
// CHECK-NOT:  core.shift
// CHECK:      core.store %mm
