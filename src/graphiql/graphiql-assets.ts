// GraphiQL's static files (script, styles, editor workers, icon) from @graphql-yoga/render-graphiql, under a path that names their version.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { SETTINGS_ELEMENT_ID, startGraphiQL } from './graphiql-start.js';

export interface GraphiQLAsset {
  /** Encoded once, when loaded: a request only wraps the same bytes in a response. */
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
}

export interface GraphiQLAssets {
  /** `<prefix><package version>-<content hash>/`: any change of any file's bytes gives a new path, so browsers may keep a file for ever. */
  basePath: string;
  /** Every file by its full path. */
  files: ReadonlyMap<string, GraphiQLAsset>;
  /** What the page links to. `favicon` is absent when the package's icon is not a data: URI. */
  urls: { script: string; style: string; start: string; favicon?: string; workers: Record<string, string> };
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** Where the files live unless told otherwise. */
const DEFAULT_GRAPHIQL_ASSET_PREFIX = '/graphiql/';

/**
 * Loads the files. The package holds GraphiQL's build (about 9 MB of text) as string exports; it is
 * imported here, on first use, so a router that never shows GraphiQL never parses it.
 *
 * 1. Take the package's strings; the icon comes as a data: URI and is decoded to its bytes.
 * 2. Add the start-up script (graphiql-start.ts), served as a file so the page needs no inline script.
 * 3. Hash every name and body: the hash, after the package version, makes the versioned path.
 */
async function loadGraphiQLAssets(prefix = DEFAULT_GRAPHIQL_ASSET_PREFIX): Promise<GraphiQLAssets> {
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const { version } = createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as { version: string };
  // In its own scope, so the page's global scope gets nothing but what GraphiQL's bundle defines.
  const start = `"use strict";\n(function () {\n${startGraphiQL.toString()}\n\nstartGraphiQL(${JSON.stringify(SETTINGS_ELEMENT_ID)});\n})();\n`;
  const named = new Map<string, GraphiQLAsset>([
    ['graphiql.js', { body: Buffer.from(graphiql.js), contentType: JS }],
    ['graphiql.css', { body: Buffer.from(graphiql.css), contentType: CSS }],
    ['start.js', { body: Buffer.from(start), contentType: JS }],
    ['workers/editor.worker.js', { body: Buffer.from(graphiql.editorWorkerService), contentType: JS }],
    ['workers/json.worker.js', { body: Buffer.from(graphiql.jsonWorker), contentType: JS }],
    ['workers/graphql.worker.js', { body: Buffer.from(graphiql.graphqlWorker), contentType: JS }],
  ]);
  const icon = /^data:([^;,]+);base64,(.*)$/s.exec(graphiql.favicon);
  if (icon) named.set('favicon.ico', { body: Buffer.from(icon[2], 'base64'), contentType: icon[1] });

  const hash = createHash('sha256');
  for (const [name, { body }] of named) hash.update(name).update(body);
  const basePath = `${prefix}${version}-${hash.digest('hex').slice(0, 12)}/`;
  const files = new Map([...named].map(([name, asset]) => [basePath + name, asset]));
  return {
    basePath,
    files,
    urls: {
      script: `${basePath}graphiql.js`,
      style: `${basePath}graphiql.css`,
      start: `${basePath}start.js`,
      favicon: icon ? `${basePath}favicon.ico` : undefined,
      // Monaco's worker labels, as Yoga's own page names them.
      workers: {
        editorWorkerService: `${basePath}workers/editor.worker.js`,
        json: `${basePath}workers/json.worker.js`,
        graphql: `${basePath}workers/graphql.worker.js`,
      },
    },
  };
}

/** One load per owner (the router): the first caller starts it, every later one gets the same files. */
export function lazyGraphiQLAssets(prefix = DEFAULT_GRAPHIQL_ASSET_PREFIX): () => Promise<GraphiQLAssets> {
  let loading: Promise<GraphiQLAssets> | undefined;
  return function graphiqlAssets() {
    return (loading ??= loadGraphiQLAssets(prefix));
  };
}
