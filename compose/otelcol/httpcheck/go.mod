module github.com/clusterscope/clusterscope/otelcol/httpcheck

go 1.26.0
