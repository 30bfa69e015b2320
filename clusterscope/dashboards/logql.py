"""The LogQL the dashboards use (Logs dashboard panels and annotations elsewhere).

Labels follow the log shipping contract: `{cluster, node, component}`. The patterns match
MariaDB/Galera error-log lines and `ndb_mgmd` cluster-log wording.
"""

from __future__ import annotations

SEL = '{cluster=~"$cluster", node=~"$node"}'

# ndb_mgmd: "Node 2: Start initiated (version ...)", "Node 2: Start phase 3 completed ...",
# "Node 2: Started (version ...)", "Node 2: Node shutdown completed, restarting".
NDB_RESTART_PATTERN = (r"Node \d+: (Start initiated|Start phase \d+ completed|Started \(|"
                       r"Node shutdown (initiated|completed))")
NDB_RESTART_EVENTS = ('{cluster=~"$cluster"} |~ `Node \\d+: (Start initiated|Started \\(|'
                      'Node shutdown completed)`')
NDB_RESTART_PHASES = f'{{cluster=~"$cluster"}} |~ `{NDB_RESTART_PATTERN}`'

# Galera: a recovery runs from "Shifting PRIMARY -> JOINER" to "Shifting JOINED -> SYNCED";
# between them the state-transfer lines say IST or SST and which donor.
GALERA_RECOVERY_PATTERN = (r"Shifting (PRIMARY -> JOINER|JOINER -> JOINED|JOINED -> SYNCED)|"
                           r"State transfer required|IST received|requested state transfer|"
                           r"SST (received|succeeded|failed)")
GALERA_RECOVERY_EVENTS = ('{cluster=~"$cluster"} |~ `Shifting (PRIMARY -> JOINER|'
                          'JOINED -> SYNCED)`')
RECOVERY_LINES = f'{SEL} |~ `{GALERA_RECOVERY_PATTERN}`'

ERROR_PATTERN = r"(?i)\[(error|warning)\]| (ALERT|WARNING|ERROR) -- "
ERRORS_BY_NODE = (f'sum by (node) (count_over_time({SEL} |~ `{ERROR_PATTERN}`'
                  ' [$__interval]))')
LINES_BY_COMPONENT = f"sum by (component) (count_over_time({SEL} [$__interval]))"
ALL_LINES = SEL
