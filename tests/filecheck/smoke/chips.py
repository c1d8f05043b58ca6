# RUN: %python %s | filecheck %s

from t10.common.chip_spec import builtin_chip_names, load_chip
from t10.common.costs import elementwise_cycles, exchange_cycles, matmul_cycles
from t10.common.traffic import Traffic
from t10.errors import T10Error

print("builtins:", " ".join(builtin_chip_names()))
# CHECK: builtins: blackhole-p150 ipu-mk2 ipu-mk2-hbm ipu-mk2-streaming ipu-pod4 mesh-64
# CHECK-SAME: test-16 wafer-48x48 wormhole-n150

chip = load_chip("test-16")
print(f"name={chip.name}")
print(f"cores={chip.cores}")
print(f"sram_bytes_per_core={chip.sram_bytes_per_core}")
print(f"clock_hz={chip.clock_hz:.4g}")
flops = chip.flops_per_cycle_per_core
print(f"flops fp32={flops['fp32']} fp16={flops['fp16']}")
print(f"exchange_cycles_per_byte={chip.exchange_cycles_per_byte}")
print(f"sync_cycles={chip.sync_cycles}")
print(f"topology={chip.topology.kind}")
# CHECK-NEXT: name=test-16
# CHECK-NEXT: cores=16
# CHECK-NEXT: sram_bytes_per_core=262144
# CHECK-NEXT: clock_hz=1.325e+09
# CHECK-NEXT: flops fp32=32 fp16=128
# CHECK-NEXT: exchange_cycles_per_byte=0.28
# CHECK-NEXT: sync_cycles=118
# CHECK-NEXT: topology=all-to-all

print("matmul 6x8x16 f32:", matmul_cycles(chip, 1, 6, 8, 16, 4))
print("elementwise 1000:", elementwise_cycles(chip, 1000, relu_like=False))
print("relu 1000:", elementwise_cycles(chip, 1000, relu_like=True))
print("exchange 100 B:", exchange_cycles(chip, Traffic.uniform(16, 100)))
# CHECK-NEXT: matmul 6x8x16 f32: 848
# CHECK-NEXT: elementwise 1000: 800
# CHECK-NEXT: relu 1000: 700
# CHECK-NEXT: exchange 100 B: 28

try:
    load_chip("nope")
except T10Error as e:
    print(e)
# CHECK-NEXT: unknown chip 'nope': built-in chips are blackhole-p150, ipu-mk2, ipu-mk2-hbm,
# CHECK-SAME: ipu-mk2-streaming, ipu-pod4, mesh-64, test-16,
# CHECK-SAME: wafer-48x48, wormhole-n150;
# CHECK-SAME: a path to a .json chip file works too
