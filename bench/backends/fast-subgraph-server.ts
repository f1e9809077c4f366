// A lean GraphQL-over-HTTP server for benchmark subgraphs: node:http and graphql-js, each query document parsed and validated once.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execute, parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';

export interface FastSubgraphOptions {
  schema: GraphQLSchema;
  /** Per-request context for the resolvers. Default: an empty object. */
  createContext?: () => unknown;
}

export interface FastSubgraph {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Why not the demo subgraphs' own server: they run graphql-yoga, whose per-request cost (fetch API
 * adaptation, envelop plugins) is close to a router's own, so on a 2-core machine three of them plus the
 * load generator saturate their core before the router saturates its own, and the benchmark would time
 * the subgraphs. This server does only what a router's calls need:
 * 1. POST /graphql with a JSON body `{ query, variables, operationName }`;
 * 2. the query string is looked up in a cache of parsed and validated documents (a router sends a handful
 *    of distinct subgraph queries, so the cache stays small; it is bounded anyway);
 * 3. graphql-js executes it; the result is serialised once and sent with Content-Length, keep-alive on.
 * GET /admin/stats answers `{ graphqlRequests }`, like the demo subgraphs, for fetches per operation.
 */
export function startFastSubgraph(options: FastSubgraphOptions, port = 0, host = '127.0.0.1'): Promise<FastSubgraph> {
  const documents = new Map<string, DocumentNode | ExecutionResult>();
  const MAX_DOCUMENTS = 1_000;
  let graphqlRequests = 0;

  function documentFor(query: string): DocumentNode | ExecutionResult {
    let cached = documents.get(query);
    if (cached === undefined) {
      try {
        const document = parse(query);
        const errors = validate(options.schema, document);
        cached = errors.length ? { errors } : document;
      } catch (error) {
        cached = { errors: [{ message: (error as Error).message }] } as unknown as ExecutionResult;
      }
      if (documents.size >= MAX_DOCUMENTS) documents.clear();
      documents.set(query, cached);
    }
    return cached;
  }

  function send(res: ServerResponse, status: number, payload: unknown): void {
    const body = JSON.stringify(payload);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  async function answerGraphql(res: ServerResponse, raw: string): Promise<void> {
    let request: { query?: string; variables?: Record<string, unknown>; operationName?: string };
    try {
      request = JSON.parse(raw) as typeof request;
    } catch {
      return send(res, 400, { errors: [{ message: 'body is not JSON' }] });
    }
    if (typeof request.query !== 'string') return send(res, 400, { errors: [{ message: 'no query' }] });
    const document = documentFor(request.query);
    if (!('kind' in document)) return send(res, 400, document);
    const result = await execute({
      schema: options.schema,
      document,
      variableValues: request.variables,
      operationName: request.operationName,
      contextValue: options.createContext?.() ?? {},
    });
    send(res, 200, result);
  }

  const server: Server = createServer(function handleFastSubgraphRequest(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/graphql' && req.method === 'POST') {
      graphqlRequests++;
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        answerGraphql(res, Buffer.concat(chunks).toString('utf8')).catch((error: Error) => send(res, 500, { errors: [{ message: error.message }] }));
      });
      return;
    }
    req.resume();
    if (path === '/admin/stats') return send(res, 200, { graphqlRequests });
    if (path === '/healthz') return send(res, 200, { ok: true });
    send(res, 404, { error: `no route ${path}` });
  });
  // The router keeps its pool's connections open between rounds; do not close them under it.
  server.keepAliveTimeout = 60_000;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${address.port}/graphql`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * A process entry's whole work: start one fast server per schema, print `<label> {"name":"url",...}` on
 * one stdout line (the bench waits for it, see fastSubgraphsBackend), and close them all on SIGTERM or SIGINT.
 */
export async function serveFastSubgraphs(label: string, schemas: Readonly<Record<string, GraphQLSchema>>): Promise<void> {
  const names = Object.keys(schemas);
  const running = await Promise.all(names.map((name) => startFastSubgraph({ schema: schemas[name]! })));
  const urls = Object.fromEntries(names.map((name, i) => [name, running[i]!.url]));
  console.log(`${label} ${JSON.stringify(urls)}`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void Promise.all(running.map((subgraph) => subgraph.close())).then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
