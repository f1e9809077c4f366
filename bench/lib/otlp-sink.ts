// A stand-in OpenTelemetry collector for the bench: accepts OTLP/HTTP exports, counts them, keeps nothing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the router appends `/v1/traces`). */
  readonly url: string;
  /** Export requests and bytes received so far. */
  stats(): { exports: number; bytes: number };
  close(): Promise<void>;
}

/**
 * Answers every POST with 200 and an empty OTLP response once the body is read, as a healthy
 * collector does; runs in the bench process (the load generator's core), never on the gateway's.
 */
export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ exports, bytes }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
