"""Every `clusterscope ...` front end: argparse, printing and exit codes, nothing else.

Each module provides `add_arguments(subparsers)`; `clusterscope/cli.py` lists them.
"""
