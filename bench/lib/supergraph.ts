// Composes a supergraph in the bench (no registry, no database) and writes it where every gateway can read it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { composeSupergraph, type SubgraphDefinition } from '../../src/gateway/compose.js';

/** Composes with the router's own composition and writes `<workDir>/<name>.supergraph.graphql`; throws with every composition error. */
export function writeSupergraph(workDir: string, name: string, subgraphs: readonly SubgraphDefinition[]): string {
  const outcome = composeSupergraph(subgraphs);
  if (!outcome.ok) throw new Error(`${name}: the subgraphs do not compose: ${outcome.errors.map((e) => `${e.code}: ${e.message}`).join('; ')}`);
  const file = path.join(workDir, `${name}.supergraph.graphql`);
  writeFileSync(file, outcome.supergraphSdl);
  return file;
}

/** Sums `graphqlRequests` from each subgraph's GET /admin/stats (the demo subgraphs and the fast ones both serve it). */
export async function countSubgraphRequests(graphqlUrls: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    graphqlUrls.map(async (url) => {
      const response = await fetch(new URL('/admin/stats', url));
      return ((await response.json()) as { graphqlRequests: number }).graphqlRequests;
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}
