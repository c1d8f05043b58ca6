// t10-opt on every case of the dialects' invalid-IR tests: one line per case, naming the
// failing op (or attribute) with the case's own expected message and the location, exit 1.
// The expected messages come from the dialect tests' CHECK lines (without xDSL's "Operation
// does not verify:" heading, and a message xDSL prints over two lines is one line here).

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/chip/invalid.mlir > %t.chip
// RUN: not t10-opt %S/../dialects/chip/invalid.mlir --split-input-file 2> %t.chip.err
// RUN: filecheck %t.chip --input-file %t.chip.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/chip/invalid.mlir:[0-9]*:[0-9]*: [^ ]" %t.chip.err

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/core/invalid.mlir > %t.core
// RUN: not t10-opt %S/../dialects/core/invalid.mlir --split-input-file 2> %t.core.err
// RUN: filecheck %t.core --input-file %t.core.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/core/invalid.mlir:[0-9]*:[0-9]*: [^ ]" %t.core.err

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/core/invalid-grids.mlir > %t.grids
// RUN: not t10-opt %S/../dialects/core/invalid-grids.mlir --split-input-file 2> %t.grids.err
// RUN: filecheck %t.grids --input-file %t.grids.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/core/invalid-grids.mlir:[0-9]*:[0-9]*: [^ ]" %t.grids.err

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/cshift/invalid.mlir > %t.cshift
// RUN: not t10-opt %S/../dialects/cshift/invalid.mlir --split-input-file 2> %t.cshift.err
// RUN: filecheck %t.cshift --input-file %t.cshift.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/cshift/invalid.mlir:[0-9]*:[0-9]*: [^ ]" %t.cshift.err

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/rtensor/invalid.mlir > %t.rtensor
// RUN: not t10-opt %S/../dialects/rtensor/invalid.mlir --split-input-file 2> %t.rtensor.err
// RUN: filecheck %t.rtensor --input-file %t.rtensor.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/rtensor/invalid.mlir:[0-9]*:[0-9]*: [^ ]" %t.rtensor.err

// RUN: sed -e 's/Operation does not verify: //' -e 's/CHECK-NEXT:/CHECK-SAME:/' %S/../dialects/rtensor/gather-invalid.mlir > %t.gather
// RUN: not t10-opt %S/../dialects/rtensor/gather-invalid.mlir --split-input-file 2> %t.gather.err
// RUN: filecheck %t.gather --input-file %t.gather.err
// RUN: not grep -v "^t10-opt: error: [^ ]*/rtensor/gather-invalid.mlir:[0-9]*:[0-9]*: [^ ]" %t.gather.err
