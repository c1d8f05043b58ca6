// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 planner=replicate}' | filecheck %s --check-prefix=SHARE60
// RUN: t10-opt %s --split-input-file --verify-diagnostics -p 't10-plan-search{chip=test-16 planner=replicate temporaries=0.5}' | filecheck %s --check-prefix=SHARE50
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 planner=replicate temporaries=0.1}' 2>&1 | filecheck %s --check-prefix=SHARE10
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 planner=t10 temporaries=0.5}' 2>&1 | filecheck %s --check-prefix=NOT-T10
// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 planner=replicate temporaries=1.5}' 2>&1 | filecheck %s --check-prefix=RANGE

// The replicate planner's rules: each operator takes its fastest plan on its own (its
// default search is `fastest`), among the plans whose bytes while it runs, beyond its
// resident weights, are at most `temporaries` (default 0.6) of a core's SRAM. 256x128 by a
// resident 128x256 weight on test-16 (262144 B per core): the fastest plan splits n over 16
// cores and takes 8192 B of weights + 147456 B while it runs (0.5625 of the SRAM); at 0.5
// the planner takes the fastest plan within 131072 B, 2 x 8 cores (81920 B while it runs).

// SHARE60: t10.plan = #rtensor.plan<grid [1, 16, 1]>, t10.estimate = #rtensor.estimate<cycles = 41652, compute = 41534, exchange = 0, sync = 118, bytes = 155648>
// SHARE50: t10.plan = #rtensor.plan<grid [2, 8, 1]>, t10.estimate = #rtensor.estimate<cycles = 50757, compute = 50639, exchange = 0, sync = 118, bytes = 98304>
// SHARE10: {{^}}t10-opt: error: t10-plan-search: operator 'fc/MatMul' does not fit the share of SRAM for temporaries: every plan needs more than 0.1 of it while it runs (the smallest 49152 bytes per core, 26214 allowed); raise temporaries (at most 1) or use planner=t10{{$}}
// NOT-T10: {{^}}t10-opt: error: t10-plan-search: temporaries (the share of SRAM an operator may use while it runs) is a rule of planner=replicate, not of planner=t10{{$}}
// RANGE: {{^}}t10-opt: error: t10-plan-search: temporaries must be a share of SRAM in (0, 1], not 1.5{{$}}

builtin.module {
  func.func @main(%x: tensor<256x128xf32> {t10.name = "input"}) -> (tensor<256x256xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<128x256xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<256x256xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<256x128xf32>, tensor<128x256xf32>) outs(%z : tensor<256x256xf32>) attrs = {t10.name = "fc/MatMul"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<256x256xf32>
    func.return %mm : tensor<256x256xf32>
  }
}
