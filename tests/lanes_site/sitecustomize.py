"""Loaded by the Python processes a unit or tools test starts (conftest puts this directory
on PYTHONPATH for the test): the lane guard of tests/lanes.py, in the child too."""

import os
import sys

if os.environ.get("CLUSTERSCOPE_TEST_LANE"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        import lanes
    finally:
        del sys.path[0]
    lanes.install_in_child()
