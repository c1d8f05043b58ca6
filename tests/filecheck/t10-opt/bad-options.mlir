// t10-opt's one-line errors for bad pass, target and frontend names and options: exit 1,
// the line names the pass (target, frontend), the option and the problem, and nothing after it.

// RUN: not t10-opt %s -p t10-plan-serch 2>&1 | filecheck %s --check-prefix=NAME
// NAME: {{^}}t10-opt: error: unknown pass 't10-plan-serch' (did you mean 't10-plan-search'?){{$}}
// NAME-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16 nosuch=1}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: {{^}}t10-opt: error: t10-plan-search: unknown option 'nosuch' (options: chip, min-utilization, precision, partials, placement, planner, search, temporaries, preload, reuse, jobs){{$}}
// UNKNOWN-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-fuse-epilogue{always=maybe}' 2>&1 | filecheck %s --check-prefix=BOOL
// BOOL: {{^}}t10-opt: error: t10-fuse-epilogue: option 'always' expects true or false, got 'maybe'{{$}}
// BOOL-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{min-utilization=half}' 2>&1 | filecheck %s --check-prefix=FLOAT
// FLOAT: {{^}}t10-opt: error: t10-plan-search: option 'min-utilization' expects a float with a decimal point (such as 1.0), got 'half'{{$}}
// FLOAT-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{chip=nosuch}' 2>&1 | filecheck %s --check-prefix=CHIP
// CHIP: {{^}}t10-opt: error: t10-plan-search: unknown chip 'nosuch': {{.*}}{{$}}
// CHIP-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{planner=greedy}' 2>&1 | filecheck %s --check-prefix=PLANNER
// PLANNER: {{^}}t10-opt: error: t10-plan-search: unknown planner 'greedy'; choose one of t10, replicate, t10-multidim, vgm{{$}}
// PLANNER-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{jobs=-1}' 2>&1 | filecheck %s --check-prefix=JOBS
// JOBS: {{^}}t10-opt: error: t10-plan-search: jobs must be 0 (one worker per CPU) or a positive count, not -1{{$}}
// JOBS-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{search=optimal}' 2>&1 | filecheck %s --check-prefix=SEARCH
// SEARCH: {{^}}t10-opt: error: t10-plan-search: unknown search 'optimal'; choose one of greedy, exact, fastest{{$}}
// SEARCH-NOT: {{.}}

// RUN: not t10-opt %s -p 't10-plan-search{chip=test-16,}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: {{^}}t10-opt: error: cannot parse 't10-plan-search{chip=test-16,}': {{.+}} (at column 30){{$}}
// SYNTAX-NOT: {{.}}

// RUN: not t10-opt %s -t nosuch 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: {{^}}t10-opt: error: argument -t/--target: invalid choice: 'nosuch' (choose from t10-sim, {{.*}}){{$}}
// TARGET-NOT: {{.}}

// RUN: not t10-opt %s -t 't10-sim{seed=x}' 2>&1 | filecheck %s --check-prefix=SEED
// SEED: {{^}}t10-opt: error: t10-sim: option 'seed' expects an integer, got 'x'{{$}}
// SEED-NOT: {{.}}

// RUN: not t10-opt %s -t t10-sim 2>&1 | filecheck %s --check-prefix=SIM
// SIM: {{^}}t10-opt: error: t10-sim: the module has no 't10.chip' attribute naming the chip; compile it first, e.g. -p 't10-compile{chip=ipu-mk2}'{{$}}
// SIM-NOT: {{.}}

// RUN: not t10-opt %s.nosuch.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: {{^}}t10-opt: error: cannot read '{{.*}}bad-options.mlir.nosuch.mlir': No such file or directory{{$}}
// MISSING-NOT: {{.}}

"test.op"() : () -> ()
