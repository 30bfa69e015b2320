"""ndbinfo_exporter: a Prometheus exporter for MySQL NDB Cluster's `ndbinfo` schema."""

__version__ = "0.1.0"
