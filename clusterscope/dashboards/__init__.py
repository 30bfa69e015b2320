"""Grafana dashboards as code (Grafana Foundation SDK), their provisioning, and a check that
every panel's query returns data on a lab (`clusterscope dashboards verify`)."""
