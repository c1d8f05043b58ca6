"""ChipSpec loading and validation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from t10.common.chip_spec import (
    ChipSpec,
    builtin_chip_names,
    chip_from_dict,
    load_chip,
)
from t10.common.topologies import AllToAllTopology, MeshTopology, MultiChipTopology
from t10.errors import T10Error

BUILTINS = ["blackhole-p150", "ipu-mk2", "ipu-mk2-hbm", "ipu-mk2-streaming", "ipu-pod4",
            "mesh-64", "test-16", "wafer-48x48", "wormhole-n150"]


def test_builtin_names() -> None:
    assert builtin_chip_names() == BUILTINS


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_loads_and_roundtrips(name: str) -> None:
    chip = load_chip(name)
    assert isinstance(chip, ChipSpec)
    assert chip.name == name
    assert chip_from_dict(chip.to_dict()) == chip
    hash(chip)  # frozen and hashable: usable as a cache key


def test_ipu_mk2_figures() -> None:
    c = load_chip("ipu-mk2")
    assert c.cores == 1472
    assert c.sram_bytes_per_core == 624 * 1024 == 638976
    assert c.clock_hz == 1.325e9
    assert c.flops_per_cycle_per_core["fp32"] == 32
    assert c.flops_per_cycle_per_core["fp16"] == 128
    assert c.flops_per_cycle_per_core["f32"] == 32  # element-type alias
    assert c.exchange_cycles_per_byte == 0.28
    assert c.sync_cycles == 118
    m = c.matmul
    assert (m.row_block, m.k_bytes_block, m.col_block) == (6, 32, 16)
    assert (m.inner_cycles, m.k_cycles, m.col_cycles, m.fixed_cycles) == (12, 514, 113, 173)
    assert m.orientation == "larger-rows"
    assert (c.elementwise.cycles_per_element, c.elementwise.fixed_cycles) == (0.5, 300)
    assert (c.relu.cycles_per_element, c.relu.fixed_cycles) == (0.5, 200)
    assert c.topology == AllToAllTopology()
    assert c.total_sram_bytes == 1472 * 638976
    assert c.cores_per_chip == 1472


def test_test16_is_small_ipu() -> None:
    small, ipu = load_chip("test-16"), load_chip("ipu-mk2")
    assert small.cores == 16
    assert small.sram_bytes_per_core == 256 * 1024
    assert small.matmul == ipu.matmul
    assert small.exchange_cycles_per_byte == ipu.exchange_cycles_per_byte
    assert small.topology == AllToAllTopology()


def test_pod4_is_multichip() -> None:
    c = load_chip("ipu-pod4")
    assert c.cores == 5888
    assert isinstance(c.topology, MultiChipTopology)
    assert c.topology.chips == 4
    assert c.cores_per_chip == c.topology.cores_per_chip == 1472
    assert (c.topology.arrangement, c.topology.links_per_pair) == ("ring", 5)
    assert c.topology.link_cycles_per_byte == 0.04140625  # 1.325 GHz / 32 GB/s per link
    assert c.topology.inner == AllToAllTopology()


def test_mesh64() -> None:
    c = load_chip("mesh-64")
    assert c.cores == 64
    assert c.sram_bytes_per_core == 262144
    topo = c.topology
    assert isinstance(topo, MeshTopology)
    assert (topo.rows, topo.cols, topo.wrap, topo.cycles_per_hop) == (8, 8, False, 1)
    assert topo.link_cycles_per_byte == 0.28


def test_wormhole_n150_is_a_torus() -> None:
    c = load_chip("wormhole-n150")
    assert (c.cores, c.sram_bytes_per_core, c.clock_hz) == (72, 1464 * 1024, 1e9)
    assert c.topology == MeshTopology(9, 8, 1 / 32, 9, wrap=True)  # 32 bytes a cycle a link
    assert c.exchange_cycles_per_byte == 1 / 64  # two NoCs of 32 bytes a cycle each


def test_blackhole_p150_is_a_torus_of_its_enabled_cores() -> None:
    c = load_chip("blackhole-p150")
    # 12 enabled columns of 10 Tensix cores, 1536 KiB each, at 1.35 GHz
    assert (c.cores, c.sram_bytes_per_core, c.clock_hz) == (120, 1536 * 1024, 1.35e9)
    assert c.topology == MeshTopology(10, 12, 1 / 64, 9, wrap=True)  # 64 bytes a cycle a link
    assert c.exchange_cycles_per_byte == 1 / 128  # two NoCs of 64 bytes a cycle each
    assert dict(c.flops_per_cycle_per_core) == {"fp32": 492.06, "fp16": 1968.25}


def test_wafer_is_a_48x48_mesh_of_48_kib_cores() -> None:
    c = load_chip("wafer-48x48")
    assert (c.cores, c.sram_bytes_per_core, c.clock_hz) == (2304, 48 * 1024, 1.1e9)
    # 220 Pb/s over 850,000 cores x 8 directed links, at 1.1 GHz: 3.68 bytes a cycle a link
    assert c.topology == MeshTopology(48, 48, 0.272, 1, wrap=False)


def test_peak_flops_unknown_precision() -> None:
    c = load_chip("test-16")
    with pytest.raises(T10Error, match="no peak figure for precision 'fp8'.*fp32, fp16"):
        c.peak_flops_per_cycle("fp8")


# ---------------------------------------------------------------------------- files and names


def _good() -> dict[str, Any]:
    return copy.deepcopy(load_chip("test-16").to_dict())


def _write(tmp_path: Path, obj: object, name: str = "x.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return str(p)


def test_load_from_path(tmp_path: Path) -> None:
    d = _good()
    d["name"] = "my-chip"
    d["cores"] = 4
    chip = load_chip(_write(tmp_path, d, "my.json"))
    assert chip.name == "my-chip" and chip.cores == 4
    assert load_chip(tmp_path / "my.json") == chip  # a Path works too


def test_topology_defaults_to_all_to_all(tmp_path: Path) -> None:
    d = _good()
    del d["topology"]
    del d["description"]
    chip = load_chip(_write(tmp_path, d))
    assert chip.topology == AllToAllTopology()
    assert chip.description == ""


def test_unknown_name_lists_builtins() -> None:
    with pytest.raises(T10Error) as e:
        load_chip("ipu-mk3")
    msg = str(e.value)
    assert "unknown chip 'ipu-mk3'" in msg
    for n in builtin_chip_names():
        assert n in msg
    assert ".json" in msg


def test_missing_file(tmp_path: Path) -> None:
    p = str(tmp_path / "nope.json")
    with pytest.raises(T10Error, match=r"chip file '.*nope\.json' does not exist"):
        load_chip(p)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(T10Error, match="is not a file"):
        load_chip(str(tmp_path))


def test_bad_json(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"name": "x",', "broken.json")
    with pytest.raises(T10Error, match=r"broken\.json': not valid JSON: .* line 1"):
        load_chip(p)


@pytest.mark.parametrize("level", ["top", "matmul", "topology"])
def test_duplicate_key_is_refused_at_every_level(tmp_path: Path, level: str) -> None:
    """json keeps the last of a repeated key: a chip file giving one twice (the second value
    silently winning) is refused naming the key, in the top object and in nested ones."""
    d = _good()
    d["topology"] = {"kind": "mesh", "rows": 4, "cols": 4, "link_cycles_per_byte": 1,
                     "cycles_per_hop": 1}
    text = json.dumps(d)
    owner, key = {"top": ("", "cores"), "matmul": ("matmul", "k_cycles"),
                  "topology": ("topology", "rows")}[level]
    value = json.dumps((d[owner] if owner else d)[key])
    assert text.count(f'"{key}": {value}') == 1
    text = text.replace(f'"{key}": {value}', f'"{key}": {value}, "{key}": {value}')
    assert load_chip(_write(tmp_path, d)) is not None  # the file without the repeat loads
    p = _write(tmp_path, text)
    with pytest.raises(T10Error) as e:
        load_chip(p)
    assert str(e.value) == (
        f"chip file '{p}': key '{key}' is given twice in one object; give each key once"
    )


# ---------------------------------------------------------------------------- validation


def _expect(tmp_path: Path, d: object, pattern: str) -> None:
    p = _write(tmp_path, d)
    with pytest.raises(T10Error, match=pattern) as e:
        load_chip(p)
    assert f"chip file '{p}'" in str(e.value)


def test_negative_cores_message(tmp_path: Path) -> None:
    d = _good()
    d["cores"] = -3
    p = _write(tmp_path, d)
    with pytest.raises(T10Error) as e:
        load_chip(p)
    assert str(e.value) == (
        f"chip file '{p}': field 'cores' must be an integer from 1 to 1048576, got -3"
    )


@pytest.mark.parametrize(
    "field, value, pattern",
    [
        ("cores", 0, "'cores' must be an integer from 1 to 1048576, got 0"),
        ("cores", 16.0, "'cores' must be an integer from 1 to 1048576, got 16.0"),
        ("cores", "16", "'cores' must be an integer from 1 to 1048576, got \"16\""),
        ("cores", True, "'cores' must be an integer from 1 to 1048576, got true"),
        ("cores", 10**12, "'cores' must be an integer from 1 to 1048576, got 1000000000000"),
        ("cores", 10**400, "'cores' must be an integer from 1 to 1048576, got an integer of 401 "
         "digits"),
        ("sram_bytes_per_core", None, "'sram_bytes_per_core' must be an integer from 1 to "
         "1099511627776, got null"),
        ("sram_bytes_per_core", 2**41, "'sram_bytes_per_core' must be an integer from 1 to"),
        ("clock_hz", 0, r"'clock_hz' must be a number > 0 and <= 1e\+12, got 0"),
        ("clock_hz", -1.0, r"'clock_hz' must be a number > 0 and <= 1e\+12, got -1.0"),
        ("clock_hz", 10**400, "'clock_hz' must be a number > 0 .* got an integer of 401 digits"),
        ("exchange_cycles_per_byte", 0.0, "'exchange_cycles_per_byte' must be a number > 0"),
        ("exchange_cycles_per_byte", 2e9, r"<= 1e\+09, got 2000000000.0"),
        ("sync_cycles", -1, "'sync_cycles' must be an integer from 0 to 1000000000, got -1"),
        ("sync_cycles", 1.5, "'sync_cycles' must be an integer from 0 to 1000000000, got 1.5"),
        ("name", "", "'name' must be a non-empty string"),
        ("name", 3, "'name' must be a non-empty string, got 3"),
        ("matmul", [], "field 'matmul' must be a JSON object, got a list"),
        ("flops_per_cycle_per_core", {}, "'flops_per_cycle_per_core.fp32' is missing"),
        ("flops_per_cycle_per_core", {"fp32": 0}, "'flops_per_cycle_per_core.fp32' must be"),
        ("flops_per_cycle_per_core", {"fp32": False}, "'flops_per_cycle_per_core.fp32' .* false"),
        ("flops_per_cycle_per_core", {"fp32": 1, "fp4": 1}, "'flops_per_cycle_per_core.fp4'"),
    ],
)
def test_bad_field(tmp_path: Path, field: str, value: object, pattern: str) -> None:
    d = _good()
    d[field] = value
    _expect(tmp_path, d, pattern)


@pytest.mark.parametrize(
    "section, key, value, pattern",
    [
        ("matmul", "row_block", 0, "'matmul.row_block' must be an integer from 1 to 1048576, "
         "got 0"),
        ("matmul", "k_bytes_block", 2.5, "'matmul.k_bytes_block' must be an integer from 1"),
        ("matmul", "inner_cycles", -12, "'matmul.inner_cycles' must be a number >= 0 and <= "
         r"1e\+09, got -12"),
        ("matmul", "k_cycles", float("inf"), "'matmul.k_cycles' must be a number >= 0 .* got inf"),
        ("matmul", "col_cycles", float("nan"), "'matmul.col_cycles' must be .* got nan"),
        ("matmul", "extra", 1, "'matmul.extra' is unknown; allowed fields here: row_block"),
        ("matmul", "orientation", "rows", "'matmul.orientation' must be one of lhs-rows, "
         'larger-rows, got "rows"'),
        ("matmul", "orientation", 1, "'matmul.orientation' must be a non-empty string"),
        ("elementwise", "cycles_per_element", 0, "'elementwise.cycles_per_element' must be"),
        ("relu", "fixed_cycles", "200", "'relu.fixed_cycles' must be a number >= 0"),
    ],
)
def test_bad_nested_field(
    tmp_path: Path, section: str, key: str, value: object, pattern: str
) -> None:
    d = _good()
    d[section][key] = value
    _expect(tmp_path, d, pattern)


@pytest.mark.parametrize(
    "field",
    ["name", "cores", "sram_bytes_per_core", "clock_hz", "flops_per_cycle_per_core", "matmul"],
)
def test_missing_field(tmp_path: Path, field: str) -> None:
    d = _good()
    del d[field]
    _expect(tmp_path, d, f"field '{field}' is missing")


def test_missing_nested_field(tmp_path: Path) -> None:
    d = _good()
    del d["matmul"]["col_cycles"]
    _expect(tmp_path, d, "field 'matmul.col_cycles' is missing")


def test_unknown_field_reported_before_missing(tmp_path: Path) -> None:
    d = _good()
    d["core"] = d.pop("cores")  # a typo
    _expect(tmp_path, d, "field 'core' is unknown; allowed fields here: name, description, cores")


def test_unusable_json(tmp_path: Path) -> None:
    """JSON that Python's decoder refuses outside the grammar: too deep, too many digits."""
    _expect(tmp_path, "[" * 100_000, "not usable JSON: maximum recursion depth")
    _expect(tmp_path, '{"cores": ' + "1" * 5000 + "}", "not usable JSON: Exceeds the limit")


def test_top_level_not_object(tmp_path: Path) -> None:
    _expect(tmp_path, [1, 2], "the top level must be a JSON object, got a list")


def test_orientation_defaults_to_lhs_rows(tmp_path: Path) -> None:
    d = _good()
    d["matmul"].pop("orientation", None)
    assert load_chip(_write(tmp_path, d)).matmul.orientation == "lhs-rows"


def test_zero_overheads_allowed(tmp_path: Path) -> None:
    d = _good()
    d["sync_cycles"] = 0
    d["matmul"]["fixed_cycles"] = 0
    d["relu"]["fixed_cycles"] = 0
    chip = load_chip(_write(tmp_path, d))
    assert chip.sync_cycles == 0 and chip.matmul.fixed_cycles == 0
