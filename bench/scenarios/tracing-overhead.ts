// Scenario: what tracing every request costs (issue 6): OpenTelemetry spans sampled at 100% and exported over OTLP/HTTP, versus off.
import { fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { switchyardVariant } from '../gateways/switchyard.js';
import { startOtlpSink, type OtlpSink } from '../lib/otlp-sink.js';
import type { Scenario } from '../lib/types.js';

/** Started by setup(): the collector the traced variant exports to. */
let sink: OtlpSink | undefined;

/** The shipped defaults with OTEL_EXPORTER_OTLP_ENDPOINT unset: no span is created. */
export const tracingOff = switchyardVariant({
  name: 'tracing-off',
  description: 'defaults, OTEL_EXPORTER_OTLP_ENDPOINT unset: no spans',
});

/**
 * Every request traced: a server span, parse, validate and execute spans, and one client span per
 * subgraph call (7 spans per product page), batched and exported to a collector stand-in.
 */
export const tracingOn = switchyardVariant({
  name: 'tracing-on',
  description: 'defaults + OTEL_EXPORTER_OTLP_ENDPOINT (bench sink), SWITCHYARD_TRACE_SAMPLE_RATIO=1',
  env: () => {
    if (!sink) throw new Error('tracing-on: the OTLP sink is not started (the scenario setup starts it)');
    return { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, SWITCHYARD_TRACE_SAMPLE_RATIO: '1' };
  },
});

export const tracingOverhead: Scenario = {
  name: 'tracing-overhead',
  summary: 'demo product page (3 subgraphs), tracing at 100% sampling exported over OTLP vs off',
  backend: fastDemoBackend,
  variants: [tracingOff, tracingOn],
  request: productPageRequest,
  async setup() {
    sink ??= await startOtlpSink();
  },
};
