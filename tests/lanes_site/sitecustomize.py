"""Loaded by the Python processes a tools test starts (conftest puts this directory on
PYTHONPATH for the test): the lane guard of tests/lanes.py, in the child too; then the
sitecustomize this one shadows (Debian's installs the apport hook), if there is one."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("CLUSTERSCOPE_TEST_LANE"):
    sys.path.insert(0, os.path.dirname(_HERE))
    try:
        import lanes
    finally:
        del sys.path[0]
    lanes.install_in_child()

_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _HERE])
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
