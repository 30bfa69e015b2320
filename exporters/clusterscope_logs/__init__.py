"""The log shipper's configuration, derived from the description of what is monitored.

`formats` holds the database log formats as data (regexes, time layouts, severity words);
`collector` turns log sources (clusterscope_inventory.description.LogSource) into the
OpenTelemetry Collector's configuration. The lab calls it directly; in compose the inventory
service serves it (/config/otelcol.yaml) and the collector reads it from there.
"""
