"""The alerting bundle: records and alerts as code, each alert with its runbook beside it.

`config` (rules/config.yaml), `model` (Alert, Runbook, Group), per component the module that
says which alerts land in which group (`ndb`, `galera`, `host`, `loadgen`, `stack`, `logs`)
and the rooms it draws them from (`ndb_restarts`, `ndb_availability`, ..., `galera_recovery`),
`runbook_page` (the generated pages) and `generate` (`clusterscope rules generate|check`).
"""
