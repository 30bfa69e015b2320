// Command otelcol is clusterscope's OpenTelemetry Collector: only the components the log
// shipper uses, so the binary the lab builds and the image compose builds are one thing.
//
// The lab builds it with `clusterscope tools build otelcol` (clusterscope/gotools.py);
// compose builds otelcol/Dockerfile from the same go.mod and go.sum. The configuration is
// generated from the description of the monitored clusters by
// exporters/clusterscope_logs/collector.py: nobody writes it by hand.
package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/httpprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// Version is the collector release every component is pinned at (go.mod); the build
// may override it with -ldflags "-X main.Version=...".
var Version = "0.165.0"

func main() {
	providers := []confmap.ProviderFactory{
		envprovider.NewFactory(),
		fileprovider.NewFactory(),
		// compose: the configuration is served by the inventory service
		// (http://inventory:9110/config/otelcol.yaml), derived from clusterscope.yml
		httpprovider.NewFactory(),
		yamlprovider.NewFactory(),
	}
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol",
			Description: "clusterscope's OpenTelemetry Collector (the log shipper)",
			Version:     Version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{ProviderFactories: providers},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		// cobra has printed the error already
		fmt.Fprintln(os.Stderr, "otelcol: exiting")
		os.Exit(1)
	}
}
