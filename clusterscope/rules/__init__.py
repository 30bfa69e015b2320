"""The alerting bundle: rules per component, their runbooks and the shared config.

`config` (rules/config.yaml), `model` (Alert, Group), one module per component (`ndb`,
`galera`, `loadgen`), `runbooks`, and `generate` (`clusterscope rules generate|check`).
"""
