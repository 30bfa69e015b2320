"""clusterscope_changes: configuration and version changes of every monitored node, found
by polling with the exporters' logins, grouped across rolling steps and logged as events."""
