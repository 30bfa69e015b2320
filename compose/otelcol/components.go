package main

import (
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// components: what the shipper's configuration may name.
//   - filelog tails the logs, unwraps CRI/JSON lines, joins multi-line entries and parses
//     each format (its stanza operators);
//   - file_storage keeps the read offsets and the export queue across restarts;
//   - health_check answers the lab's readiness wait and the image's HEALTHCHECK;
//   - batch groups entries before the export;
//   - otlphttp sends them to VictoriaLogs' OTLP endpoint (or to any OTLP/HTTP logs
//     receiver, such as Loki 3's /otlp).
func components() (otelcol.Factories, error) {
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		filelogreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		batchprocessor.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		otlphttpexporter.NewFactory()); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		filestorage.NewFactory(), healthcheckextension.NewFactory()); err != nil {
		return f, err
	}
	return f, nil
}
