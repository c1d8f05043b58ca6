// `t10 compile` shows the IR after named passes, or after all, and the passes' times, on
// stderr; the IR at the --emit level stays alone on stdout.
// RUN: %python -m t10.examples matmul m=8 k=12 n=6 -o %t.onnx
// RUN: t10 compile %t.onnx --chip test-16 --emit rtensor --print-ir-after t10-plan-search --time-passes 2>&1 >/dev/null | filecheck %s
// RUN: t10 compile %t.onnx --chip test-16 --emit rtensor --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: t10 compile %t.onnx --chip test-16 --emit rtensor --print-ir-after t10-plan-search 2>/dev/null | filecheck %s --check-prefix=OUT
// RUN: not t10 compile %t.onnx --chip test-16 --emit rtensor --print-ir-after convert-core-to-chip 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:      // -----// IR Dump After t10-plan-search //----- //
// CHECK-NEXT: builtin.module attributes {t10.chip = "test-16"
// CHECK:        t10.plan = #rtensor.plan<
// CHECK-NOT:  IR Dump After
// CHECK:      ... Execution time report ...
// CHECK:        Total Execution Time: {{[0-9.]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  t10-inline-splats
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  t10-fuse-elementwise
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  t10-fuse-epilogue
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  t10-plan-search
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  convert-linalg-to-rtensor
// CHECK-NEXT:   {{ *[0-9.]+}} ({{ *[0-9.]+}}%)  (verify the IR after each pass)
// CHECK-NEXT:   {{ *[0-9.]+}} (100.0%)  Total

// ALL:      IR Dump After t10-inline-splats
// ALL:      IR Dump After t10-fuse-elementwise
// ALL:      IR Dump After t10-fuse-epilogue
// ALL:      IR Dump After t10-plan-search
// ALL:      IR Dump After convert-linalg-to-rtensor
// ALL:        rtensor.

// OUT:     builtin.module
// OUT-NOT: IR Dump
// OUT:     rtensor.

// BAD: t10: error: --print-ir-after: 'convert-core-to-chip' is not a pass of the pipeline (its passes: t10-inline-splats, t10-fuse-elementwise, t10-fuse-epilogue, t10-plan-search, convert-linalg-to-rtensor)
