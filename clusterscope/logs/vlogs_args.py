"""VictoriaLogs' command line, the same in the lab and in compose (tests compare them).

Flags of VictoriaLogs v1.52.1 (VictoriaMetrics/VictoriaLogs app/vlstorage/main.go,
app/victoria-logs/main.go): `-retentionPeriod` deletes entries whose `_time` is older
(its default is 7d; set explicitly here so the docs state what runs),
`-retention.maxDiskUsagePercent` deletes the oldest data when the disk holding the data
fills beyond it (compose only: a lab's disk is shared with other work),
`-futureRetention` (default 2d) rejects entries stamped further ahead.
"""

from __future__ import annotations

from pathlib import Path


def vlogs_args(data_dir: str | Path, listen: str, retention: str,
               max_disk_usage_percent: int | None = None) -> list[str]:
    args = [f"-storageDataPath={data_dir}", f"-httpListenAddr={listen}",
            f"-retentionPeriod={retention}"]
    if max_disk_usage_percent is not None:
        args.append(f"-retention.maxDiskUsagePercent={max_disk_usage_percent}")
    return args
