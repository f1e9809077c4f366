// The router's HTTP server: Node's connection timeouts, listening, and the drain that stops it at shutdown.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.js';
import type { Router } from '../router.js';
import type { ResourceStack } from './resource-stack.js';

export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** The HTTP server, whose release (pushed last, so run first) stops accepting and lets requests in flight finish. */
export function serveDraining(router: Router, streamed: (request: IncomingMessage, response: ServerResponse) => boolean, config: Config, resources: ResourceStack): Server {
  // Subscriptions over SSE and multipart are taken in front of the router's own listener (http-subscriptions.ts).
  const server = createServer(connectionTimeouts(config), (request, response) => {
    if (!streamed(request, response)) void router(request, response);
  });
  // Keep-alive sockets of clients must not hold shutdown hostage. server.close() only closes the idle
  // ones: a socket busy at that moment would serve a client that keeps asking (a dashboard polling
  // /metrics every second) for ever, so while draining every answer also closes its connection.
  let draining = false;
  let answering = 0;
  const answered = () => answering--;
  server.prependListener('request', function closeConnectionWhenDraining(_request, response) {
    answering++;
    response.once('close', answered);
    if (draining) response.setHeader('connection', 'close');
  });
  resources.push(function drain() {
    draining = true;
    return new Promise<void>((resolve) => {
      // Draining waits for answers in flight, not for connections: one whose answer was sent goes idle
      // and would wait out the keep-alive timeout (65 s by default, above a load balancer's); one still
      // sending a request's headers or a body nobody reads would wait out the request timeout. Swept
      // until the server is closed: idle ones at once, and all of them once no answer is in flight.
      const sweep = setInterval(() => (answering === 0 ? server.closeAllConnections() : server.closeIdleConnections()), 100);
      server.close(() => {
        clearInterval(sweep);
        resolve();
      });
      server.closeIdleConnections();
    });
  }, 'http server could not be closed');
  return server;
}

/**
 * Node's timeouts of the router's connections (docs/operations.md has the load-balancer values to match):
 * 1. `keepAliveTimeout`: an idle connection closes this long after its last answer.
 * 2. `headersTimeout`, `requestTimeout`: a client still sending a request's headers, or its whole
 *    request, after this long gets 408 and its connection is closed (slow loris); so does a new
 *    connection that sends nothing. On a reused connection the clock starts at the next request's
 *    first byte, not at the last answer. Both bound receiving the request only; an answer, however
 *    long it streams, is never cut by them (measured on Node 20).
 * 3. Node checks those two on a timer, `connectionsCheckingInterval` (default 30 s), so a slow client
 *    is cut between its timeout and the next check. A quarter of the headers timeout (at most Node's
 *    30 s, at least 50 ms) cuts it within 1.25 times its timeout, also with the small values tests
 *    use, for a walk over the open connections a few times a minute.
 */
function connectionTimeouts(config: Pick<Config, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs'>): ServerOptions {
  return {
    keepAliveTimeout: config.keepAliveTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.headersTimeoutMs / 4))),
  };
}
