// The pipeline run stage by stage, one t10-opt process per level reading the text IR the
// previous one wrote, reports what `t10 run` reports: the plans, estimates and bounds
// t10-plan-search records on the module (t10.planned_ops, t10.bound) travel down every level.
// The same CHECK lines match t10 run's report, t10-compile in one process and the stages.
// RUN: %python -m t10.examples matmul m=64 k=64 n=64 -o %t.mm.onnx
// RUN: t10 run %t.mm.onnx --chip test-16 -q | filecheck %s --check-prefix=MM
// RUN: t10-opt %t.mm.onnx -p 't10-compile{chip=test-16}' -t t10-sim | filecheck %s --check-prefix=MM
// RUN: t10-opt %t.mm.onnx -p 't10-plan-search{chip=test-16}' -o %t.mm.linalg.mlir
// RUN: filecheck %s --check-prefix=LEVEL < %t.mm.linalg.mlir
// RUN: t10-opt %t.mm.linalg.mlir -p convert-linalg-to-rtensor,convert-rtensor-to-cshift -o %t.mm.cshift.mlir
// RUN: filecheck %s --check-prefix=LEVEL < %t.mm.cshift.mlir
// RUN: t10-opt %t.mm.cshift.mlir -p convert-cshift-to-core,convert-core-to-chip -o %t.mm.chip.mlir
// RUN: filecheck %s --check-prefix=LEVEL < %t.mm.chip.mlir
// RUN: t10-opt %t.mm.chip.mlir -t t10-sim | filecheck %s --check-prefix=MM

// MM:      total   4,850 cycles = 3.660 µs (plan-search estimate 4,850 cycles)
// MM-NEXT: bound   2,456 cycles (total ÷ bound 1.97)
// MM-NEXT: SRAM    peak 8,192 B per core of 262,144 B (3.1% used) (plan-search bound 9,216 B)
// MM:      op      kind         cores  cycles  compute  exchange  sync  estimate  bound  SRAM/core  plan
// MM-NEXT: matmul  contraction     16   4,850    3,922       574   354     4,850  2,456      8,192  #rtensor.plan<grid [2, 4, 2]>

// LEVEL: builtin.module attributes {{.*}}t10.bound = 2456 : i64, t10.planned_ops = [{name = "matmul", kind = "contraction", plan = "#rtensor.plan<grid [2, 4, 2]>", estimate = 4850 : i64, sram = 9216 : i64, bound = 2456 : i64}]}

// An MLP, fused as t10 run fuses it (t10-compile's passes, stage by stage): a move and epilogues.
// RUN: %python -m t10.examples mlp batch=16 sizes=64,128,32 -o %t.mlp.onnx
// RUN: t10 run %t.mlp.onnx --chip test-16 -q | filecheck %s --check-prefix=MLP
// RUN: t10-opt %t.mlp.onnx -p 't10-inline-splats,t10-fuse-elementwise,t10-fuse-epilogue{chip=test-16},t10-plan-search{chip=test-16}' -o %t.mlp.linalg.mlir
// RUN: t10-opt %t.mlp.linalg.mlir -p convert-linalg-to-rtensor,convert-rtensor-to-cshift -o %t.mlp.cshift.mlir
// RUN: t10-opt %t.mlp.cshift.mlir -p convert-cshift-to-core,convert-core-to-chip -t t10-sim | filecheck %s --check-prefix=MLP

// MLP:      total   7,617 cycles = 5.749 µs (plan-search estimate 7,617 cycles)
// MLP-NEXT: bound   3,348 cycles (total ÷ bound 2.28)
// MLP:      op                           kind         cores  cycles  compute  exchange  sync  estimate  bound  SRAM/core  plan
// MLP-NEXT: fc1/MatMul+fc1/Add+fc1/Relu  contraction     16   4,026    2,810       862   354     4,026  1,858      6,848  #rtensor.plan<grid [1, 4, 4]>
// MLP-NEXT: fc2/MatMul+fc2/Add/relayout  relayout        16     405        0       287   118       405      -      6,336  -
// MLP-NEXT: fc2/MatMul+fc2/Add           contraction     16   3,186    2,330       502   354     3,186  1,490      5,312  #rtensor.plan<grid [1, 2, 8]>

// A BERT-Base layer: the report of the stages is t10 run's, line for line but the model's file.
// RUN: t10 zoo bert-base --layers 1 --seq 32 -o %t.bert.onnx
// RUN: t10 run %t.bert.onnx --timing-only -q | grep -v '^model ' > %t.bert.run.txt
// RUN: t10-opt %t.bert.onnx -p 't10-inline-splats,t10-fuse-elementwise,t10-fuse-epilogue,t10-plan-search' -o %t.bert.linalg.mlir
// RUN: t10-opt %t.bert.linalg.mlir -p convert-linalg-to-rtensor,convert-rtensor-to-cshift -o %t.bert.cshift.mlir
// RUN: t10-opt %t.bert.cshift.mlir -p convert-cshift-to-core,convert-core-to-chip -t 't10-sim{timing-only=true}' > %t.bert.sim.txt
// RUN: diff %t.bert.run.txt %t.bert.sim.txt
// RUN: filecheck %s --check-prefix=BERT < %t.bert.sim.txt

// BERT:      chip    ipu-mk2: 1,472 cores
// BERT:      total   [[TOTAL:[0-9,]+]] cycles = {{.*}} (plan-search estimate [[TOTAL]] cycles)
// BERT-NEXT: bound   {{[0-9,]+}} cycles (total ÷ bound {{[0-9.]+}})
// BERT:      op {{.*}} estimate  bound  SRAM/core  plan
// BERT:      {{.*}}/MatMul{{.*}} contraction {{.*}} #rtensor.plan<grid [{{.*}}]>
