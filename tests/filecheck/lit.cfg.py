"""lit configuration for the FileCheck tests (`lit -v tests/filecheck`).

Tests are `.mlir` and `.py` files with `// RUN:` / `# RUN:` lines.  Substitutions:
`%python` is the interpreter running lit; `t10-opt`, `xdsl-opt`, `t10` and `filecheck` are
found on PATH, which starts with the directory of that interpreter (the project venv's bin/).
"""

# ruff: noqa: F821  (lit injects `config` and `lit_config`)

import os
import sys

import lit.formats

config.name = "t10"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs", "Output", "__pycache__"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

_bindir = os.path.dirname(sys.executable)
_repo_root = os.path.dirname(os.path.dirname(config.test_source_root))

config.environment["PATH"] = os.pathsep.join(
    [_bindir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# Make `import t10` work even when lit runs from an environment without the editable install.
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in [_repo_root, os.environ.get("PYTHONPATH", "")] if p
)
for _var in ("HOME", "TMPDIR", "LANG", "LC_ALL"):
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]

config.substitutions.append(("%python", sys.executable))
