// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16}' | filecheck %s --check-prefixes=CHECK,ALL
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 jobs=1 reuse=false}' | filecheck %s --check-prefixes=CHECK,ALL
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 search=exact}' | filecheck %s --check-prefixes=CHECK,ALL
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 planner=replicate}' | filecheck %s --check-prefixes=REPL,ALL
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 planner=greedy}' | filecheck %s --check-prefix=BAD
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 search=fastest}' | filecheck %s --check-prefix=FASTEST

// The planner option is checked before anything else, once per input chunk.
// BAD-COUNT-7: t10-plan-search: unknown planner 'greedy'; choose one of t10, replicate, t10-multidim, vgm

// Plain: a 64x64x64 matmul and its bias add. No memory pressure on test-16 (256 KiB per
// core), so both planners pick the fastest plan, which is spatial only. It splits k, so
// the add cannot take the product where it lies: its inputs' transition is estimated.

// CHECK: builtin.module attributes {t10.chip = "test-16", t10.planner = "t10", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 9232 : i64, t10.bound = 3002 : i64, t10.planned_ops = [{name = "fc/MatMul", kind = "contraction", plan = "#rtensor.plan<grid [2, 4, 2]>", estimate = 4850 : i64, sram = 9216 : i64, bound = 2456 : i64}, {name = "fc/Add/relayout", kind = "relayout", estimate = 405 : i64, sram = 1024 : i64}, {name = "fc/Add", kind = "elementwise", plan = "#rtensor.plan<grid [1, 16]>", estimate = 546 : i64, sram = 2064 : i64, bound = 546 : i64}]}
// REPL:  builtin.module attributes {t10.chip = "test-16", t10.planner = "replicate", t10.precision = "fp32", t10.partials = "fp32", t10.model_bytes = 9232 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]}
// ALL:       t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 4850, compute = 3922, exchange = 574, sync = 354, bytes = 9216>
// ALL:       t10.name = "fc/Add", t10.plan = #rtensor.plan<grid [1, 16]>, t10.estimate = #rtensor.estimate<cycles = 546, compute = 428, exchange = 0, sync = 118, bytes = 2064>, t10.relayout = #rtensor.estimate<cycles = 405, compute = 0, exchange = 287, sync = 118, bytes = 1024>

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}

// -----

// Pinned: the matmul's hand-written plan (Cannon on a 4x4 grid) is kept with a recomputed
// estimate, whatever the planner; the unpinned add is still searched and takes the plan
// that reads the product where the matmul leaves it (no transition).

// ALL:       t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>, t10.estimate = #rtensor.estimate<cycles = 8602, compute = 6408, exchange = 1722, sync = 472, bytes = 5120>
// ALL:       t10.name = "fc/Add", t10.plan = #rtensor.plan<grid [4, 4]>, t10.estimate = #rtensor.estimate<cycles = 546, compute = 428, exchange = 0, sync = 118, bytes = 2112>}

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}

// -----

// Memory pressure: 256x512 by a resident 512x512 weight does not fit 256 KiB per core when
// replicated (the smallest plan, 131072 + 229376 bytes, takes more than replicate's share of
// SRAM for temporaries, 0.6, while it runs); the t10 planner splits n and k over 4 cores
// each and, stepping along n, passes the output's partial sums around the ring of the 4
// k-cores.

// CHECK:     t10.name = "big/MatMul", t10.plan = #rtensor.plan<grid [1, 4, 4] shift d1 steps 4 rotate [(out, d2, 4)]>, t10.estimate = #rtensor.estimate<cycles = 359580, compute = 331580, exchange = 27528, sync = 472, bytes = 262144>
// With search=fastest every operator takes its fastest plan, which replicates the weight:
// FASTEST:   the model does not fit chip 'test-16': it has 262144 bytes of SRAM per core, but every operator's fastest plan needs 1114112 bytes per core:
// FASTEST-SAME: 1048576 bytes of resident weights (the most: 'big/MatMul' 1048576) + 65536 bytes while 'big/MatMul' runs; use search=greedy or search=exact, which trade time for memory
// REPL:      the model does not fit chip 'test-16': it has 262144 bytes of SRAM per core, but the smallest plans need 655360 and every operator's fastest plan needs 1114112 bytes per core:
// REPL-SAME: 1048576 bytes of resident weights (the most: 'big/MatMul' 1048576) + 65536 bytes while 'big/MatMul' runs;
// REPL-SAME: or the t10 planner (planner=t10)

builtin.module {
  func.func @main(%x: tensor<256x512xf32> {t10.name = "input"}) -> (tensor<256x512xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<512x512xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<256x512xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<256x512xf32>, tensor<512x512xf32>) outs(%z : tensor<256x512xf32>) attrs = {t10.name = "big/MatMul"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<256x512xf32>
    func.return %mm : tensor<256x512xf32>
  }
}

// -----

// Liveness: the Exp's output waits for the Add while the matmul runs, so it counts in the
// model's bytes: resident weights 2048 + the matmul's own 7168 + the Exp's output 1024.

// ALL: builtin.module attributes {{.*}} t10.model_bytes = 10240 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]}
// ALL:       t10.name = "act/Exp", t10.plan = #rtensor.plan<grid [1, 16]>, t10.estimate = #rtensor.estimate<cycles = 546, compute = 428, exchange = 0, sync = 118, bytes = 2048>
// ALL:       t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 4850, compute = 3922, exchange = 574, sync = 354, bytes = 9216>

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "x"}, %u: tensor<64x64xf32> {t10.name = "u"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "act/Exp"} {
    ^bb0(%i: f32, %o: f32):
      %s = math.exp %i : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%u, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul"} {
    ^bb0(%i: f32, %c: f32, %acc: f32):
      %p = arith.mulf %i, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %mm : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "sum/Add"} {
    ^bb0(%i: f32, %c: f32, %o: f32):
      %s = arith.addf %i, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %y : tensor<64x64xf32>
  }
}

// -----

// A shared move: both matmuls read the Exp's output in the same layout, so the second reuses
// the first one's relayout (t10.reused_inputs; no t10.relayout of its own).

// ALL:       t10.name = "q/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 4850, compute = 3922, exchange = 574, sync = 354, bytes = 9216>, t10.relayout = #rtensor.estimate<cycles = 1265, compute = 0, exchange = 1147, sync = 118, bytes = 4096>}
// ALL:       t10.name = "k/MatMul", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 4850, compute = 3922, exchange = 574, sync = 354, bytes = 9216>, t10.reused_inputs = array<i64: 0>}

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "x"}) -> (tensor<64x64xf32> {t10.name = "q"}, tensor<64x64xf32> {t10.name = "k"}) {
    %wq = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %wk = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "act/Exp"} {
    ^bb0(%i: f32, %o: f32):
      %s = math.exp %i : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %wq : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "q/MatMul"} {
    ^bb0(%i: f32, %c: f32, %acc: f32):
      %p = arith.mulf %i, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %wk : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "k/MatMul"} {
    ^bb0(%i: f32, %c: f32, %acc: f32):
      %p = arith.mulf %i, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %q, %k : tensor<64x64xf32>, tensor<64x64xf32>
  }
}

// -----

// A pinned plan that does not fit its operator is an error naming the operator.

// ALL: operator 'fc/MatMul': pinned plan <grid [4, 4]> is invalid: it has 2 factors but the operator has 3 loop dims

builtin.module {
  func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul", t10.plan = #rtensor.plan<grid [4, 4]>} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %mm : tensor<64x64xf32>
  }
}

// -----

// The same matmul with the add marked as its epilogue (t10-fuse-epilogue): one operator,
// planned and estimated on the matmul; the add runs on the matmul's output tiles, on half of
// each (k is split over 2 cores) between the all-reduce's reduce-scatter and all-gather: an
// element-wise pass over 256 elements (+428 compute), no sync, no relayout: 5,278 cycles
// instead of 4,850 + 546 + 405.

// ALL:       attrs = {t10.name = "fc/MatMul+fc/Add", t10.plan = #rtensor.plan<grid [2, 4, 2]>, t10.estimate = #rtensor.estimate<cycles = 5278, compute = 4350, exchange = 574, sync = 354, bytes = 9280>}
// ALL:       attrs = {t10.name = "fc/Add", t10.epilogue = 0 : i64}

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "input"}) -> (tensor<64x64xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) attrs = {t10.name = "fc/MatMul+fc/Add"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) attrs = {t10.name = "fc/Add", t10.epilogue = 0 : i64} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}


// -----

// No operator, two views of the argument returned: the argument is placed once (on one core:
// no plan uses more), each view is moved into a buffer of its own; the peak is the argument
// with the larger view: 16384 + 16384.

// ALL: builtin.module attributes {{.*}} t10.model_bytes = 32768 : i64, t10.bound = {{[0-9]+}} : i64, t10.planned_ops = [{{.*}}]}

builtin.module {
  func.func @main(%x: tensor<64x64xf32> {t10.name = "x"}) -> (tensor<32x64xf32> {t10.name = "top"}, tensor<64x64xf32> {t10.name = "t"}) {
    %top = rtensor.view "top" %x map affine_map<(d0, d1) -> (d0, d1)> : tensor<64x64xf32> -> tensor<32x64xf32>
    %t = rtensor.view "t" %x map affine_map<(d0, d1) -> (d1, d0)> : tensor<64x64xf32> -> tensor<64x64xf32>
    func.return %top, %t : tensor<32x64xf32>, tensor<64x64xf32>
  }
}
