"""The soak's faults and what each must (and may) set off: the one table of alert names.

Each fault kind names the alerts the lab's rules should fire while it lasts (`expect`) and
the ones it may set off without that being a wrong alert (`allow`). An expected alert is
required only when the fault was held for at least the rule's own `for:` plus the
detection slack (a scrape and two evaluations), so a short soak (CI) judges the same table
without waiting minutes per fault; the rules' `for:` values are read from the running
vmalert, never copied here. `lasts` is how long after the fault ends an alert may still
start or stay firing because its rule looks back (e.g. GaleraNodeRestarted: uptime < 300 s).

When the alert names change (rules/config.yaml), this table is the place to follow them:
`check_names` refuses a name the running vmalert does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Alert:
    name: str
    labels: dict[str, str] = field(default_factory=dict)  # {} or values with {node} etc.
    lasts: float = 0.0  # seconds after the fault's end it may still start/fire


@dataclass(frozen=True)
class Kind:
    name: str
    what: str
    hold_for: tuple[str, ...]  # alerts whose `for:` sets the hold of a full-length run
    expect: tuple[Alert, ...]
    allow: tuple[Alert, ...] = ()
    cluster_event: bool = False  # the Galera cluster under load changes: windows invalid


GALERA_DOWN = (Alert("GaleraNodeNotReady", {"node": "{node}"}),
               Alert("GaleraClusterSizeReduced", {"cluster": "lab-galera"}))
GALERA_MAY = (
    # the exporter's probe of a dead node fails: last_scrape_error 1 (`for:` 2m)
    Alert("GaleraExporterDown", {"node": "{node}"}),
    # the joiner and its donor are not Synced while the transfer runs
    Alert("GaleraNodeOutOfSync"), Alert("GaleraDonorFallingBehind"),
    Alert("GaleraFlowControlHigh", lasts=300), Alert("GaleraRecvQueueHigh"),
)

KINDS: dict[str, Kind] = {k.name: k for k in (
    # Held briefly even in a full-length run: the donor's gcache (the lab's 128M) must
    # still hold every write-set the node missed, and at the soak's write rate (~2,700
    # write-sets/s) it holds well under the 105 s a hold past GaleraNodeNotReady's `for:`
    # takes; a 60-minute soak held it that long and each "IST" became an SST (counted as
    # such, GaleraGcacheTooSmall pending). The galera-sst fault holds past the `for:`s.
    Kind("galera-ist", "Galera node SIGKILLed, then started: it rejoins by IST",
         (),
         (*GALERA_DOWN, Alert("GaleraNodeRestarted", {"node": "{node}"}, lasts=300)),
         GALERA_MAY, cluster_event=True),
    Kind("galera-sst", "Galera node SIGKILLed, then started with --force-sst: full SST",
         ("GaleraNodeNotReady",),
         (*GALERA_DOWN, Alert("GaleraNodeRestarted", {"node": "{node}"}, lasts=300),
          Alert("GaleraRecoveryUsedSST", {"node": "{node}"}, lasts=600)),
         GALERA_MAY, cluster_event=True),
    Kind("ndb-restart", "NDB data node restart (`lab ndb restart-node`) through every phase",
         (), (), (Alert("NdbDataNodeDown", {"node_id": "{node}"}),
                  Alert("NdbNodeGroupLastReplica", {"cluster": "lab-ndb"}))),
    # the lab's NDB has one node group of two: a stopped node leaves its last replica, which
    # pages and inhibits the node's own NdbDataNodeDown (clusterscope_inventory/alerting.py)
    Kind("ndb-stop", "NDB data node stopped (`stop-node`), then started (`start-node`)",
         ("NdbNodeGroupLastReplica",),
         (Alert("NdbNodeGroupLastReplica", {"cluster": "lab-ndb"}),),
         (Alert("NdbDataNodeDown", {"node_id": "{node}"}),)),
    Kind("ndb-sql-kill", "the exporter's serving NDB SQL node SIGKILLed, then started: the"
         " exporter fails over", ("NdbSqlNodeDown",),
         (Alert("NdbSqlNodeDown", {"sql_node": "{node}"}),)),
    Kind("kill-mysqld-exporter", "mysqld_exporter SIGKILLed, then started",
         ("GaleraExporterDown",), (Alert("GaleraExporterDown"),)),
    Kind("kill-ndb-exporter", "ndbinfo_exporter SIGKILLed, then started",
         ("NdbExporterDown",), (Alert("NdbExporterDown", {"cluster": "lab-ndb"}),)),
    Kind("kill-tracker", "the Galera recovery tracker SIGKILLed, then started",
         ("GaleraTrackerDown",), (Alert("GaleraTrackerDown"),)),
    Kind("kill-inventory", "the inventory (service discovery) SIGKILLed, then started",
         ("ClusterscopeInventoryDown",), (Alert("ClusterscopeInventoryDown"),)),
    Kind("restart-vm", "VictoriaMetrics stopped (SIGTERM) and started again", (), (),
         # vmalert's queries and remote writes fail while VictoriaMetrics is down; the
         # rules look at the errors' increase over 5m, held `for:` 5m
         (Alert("ClusterscopeRuleErrors", lasts=300),
          Alert("ClusterscopeVmalertFailing", lasts=300),
          Alert("ClusterscopeVictoriaMetricsFailing"),
          Alert("ClusterscopeAlertDeliveryFailing", lasts=300))),
    Kind("log-rotate", "a Galera node's error log renamed away, the server reopens a new one",
         (), ()),
    Kind("log-recopy", "a Galera node's error log replaced by a copy of itself (a new inode,"
         " as rsync leaves it), the server appends to the copy", (), ()),
    Kind("hang-ndb-exporter", "ndbinfo_exporter SIGSTOPped (a target that hangs), then"
         " SIGCONTinued", ("NdbExporterDown",),
         (Alert("NdbExporterDown", {"cluster": "lab-ndb"}),),
         # the scrape in flight when it stopped measures the stop: > 4 s, held 10m
         (Alert("NdbExporterSlow", lasts=660),)),
)}

# Always firing by design (the heartbeat), never judged.
ALWAYS = ("ClusterscopeWatchdog",)
# What the soak's own load, or a machine shared with other work, makes true of the lab
# whatever the faults: alert -> (labels it must have, why). Reported apart (`ambient`),
# never counted as wrong: the machine's slowness is not the stack's fault.
AMBIENT: dict[str, tuple[dict[str, str], str]] = {
    # the loadgen writes without pause: the lab's 128 MiB gcache holds less than 30 min
    # of its write-sets (`for: 1h`, so only in a run an hour long)
    "GaleraGcacheTooSmall": ({}, "the loadgen's write rate fills the lab's 128 MiB gcache"
                                 " in less than 30 minutes"),
    "HostCpuBusy": ({}, "the 2-core machine is busy (the soak, the lab and other work)"),
    # the soak fills no filesystem; the lab's node_exporter sees the machine's, which other
    # work writes (another lab, a test filling a tmpfs), and the lab shortens both disk
    # alerts' `for:` to 20 s (LAB_RULE_OVERRIDES)
    "HostFilesystemFillingUp": ({}, "the machine's filesystems are written by work outside"
                                    " the soak"),
    "HostFilesystemAlmostFull": ({}, "the machine's filesystems are filled by work outside"
                                     " the soak"),
    "ClusterscopeVmalertFailing": ({"problem": "missed evaluations"},
                                   "vmalert's evaluations ran late on the busy machine"),
}


def names() -> set[str]:
    return ({a.name for k in KINDS.values() for a in (*k.expect, *k.allow)} | set(ALWAYS)
            | set(AMBIENT))


def check_names(known: set[str]) -> list[str]:
    """Alert names of the table that the running rules do not define (a rename)."""
    return sorted(names() - known)


def resolve(alert: Alert, target: str) -> dict[str, str]:
    return {k: v.format(node=target) for k, v in alert.labels.items()}
