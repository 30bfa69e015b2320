"""clusterscope loadgen: continuous A/B experiments driven through sysbench."""

__version__ = "0.1.0"
