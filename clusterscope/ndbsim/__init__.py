"""The NDB Cluster simulator: a model of a running cluster served as `ndbinfo` from MariaDB.

NDB binaries cannot run here, so the lab's NDB cluster is SIMULATED: `model` computes what
the data nodes would report (threads, CPU, counters, transporters, LCPs, restarts), `store`
writes it into the real-named `ndb$*` tables behind the `ndbinfo` views (DDL from
`ndbinfo_exporter.schema`), `control` lets a separate CLI call drive the running model.
"""
