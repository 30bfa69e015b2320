"""clusterscope: observability and continuous benchmarks for NDB Cluster and Galera."""

__version__ = "0.1.0"
