"""clusterscope_inventory: the description of what is monitored, and what follows from it."""

__version__ = "0.1.0"
