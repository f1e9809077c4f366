// The `subgraphs` section: each published subgraph's URL and route metadata. Its SDL is its owners' (`subgraph publish`), so a file never adds or removes one.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { routeSchema, type RouteMetadata } from '../route.js';
import { listSubgraphs, subgraphNameProblem, subgraphUrlProblem, updateSubgraphRoute } from '../subgraph-store.js';
import type { ConfigSectionDescriptor } from './section.js';
import { isPlainObject, keyedBy, mapValues, sortedEntries } from './section-schema.js';

/** A published subgraph's address and route metadata (its SDL is published by `subgraph publish`). */
export interface SubgraphConfig {
  url: string;
  /** Absent: no route metadata (the router defaults). */
  route?: RouteMetadata;
}

/** By subgraph name. */
export type SubgraphsSection = Record<string, SubgraphConfig>;

/** An empty route is no route: written as no `route` key, so the file and the registry say it one way. */
const withRoute = (url: string, route: RouteMetadata | null | undefined): SubgraphConfig => (route && Object.keys(route).length > 0 ? { url, route } : { url });

const subgraphSchema = z.object({ url: z.string(), route: routeSchema.nullish() }).strict();

export const subgraphsSection: ConfigSectionDescriptor<SubgraphsSection, 'subgraphs'> = {
  name: 'subgraphs',
  noun: 'subgraph',
  schema: keyedBy(subgraphSchema, (name, entry) => {
    const nameProblem = subgraphNameProblem(name);
    if (nameProblem) return { message: nameProblem };
    const url = isPlainObject(entry) ? entry.url : undefined;
    const urlProblem = typeof url === 'string' ? subgraphUrlProblem(name, url) : undefined;
    return urlProblem ? { path: ['url'], message: urlProblem } : undefined;
  }).transform((subgraphs) => mapValues(subgraphs, ({ url, route }) => withRoute(url, route))),
  // Removing a subgraph changes the schema clients query: that is its owners' command, with its composition check.
  neverPruned: 'subgraphs are removed by switchyard subgraph remove',

  async export(db) {
    return sortedEntries((await listSubgraphs(db)).map(({ name, url, route }) => [name, withRoute(url, route)]));
  },

  // The route compared leaf by leaf (`route.breaker.failureRatio`), so a diff names the one threshold that moves.
  items: (subgraphs) => Object.entries(subgraphs).map(([name, { url, route }]) => ({ ref: [name], fields: { url, route: route ?? {} } })),

  problems: (changes) =>
    changes
      .filter((change) => change.action === 'add')
      .map(({ ref: [name] }) => `subgraph "${name}" is not published: publish its schema first (switchyard subgraph publish ${name} --url URL); config apply sets the URL and route of published subgraphs only`),

  async apply(tx, changes, desired) {
    for (const { action, ref } of changes) {
      const name = ref[0];
      switch (action) {
        case 'change': {
          // A URL change runs no composition check: composition reads SDL only (decision 029).
          const { url, route } = desired[name];
          await updateSubgraphRoute(tx, { name, url, route: route ?? {} });
          break;
        }
        case 'add': // refused by `problems`: the subgraph is not published
        case 'remove': // never: `neverPruned`
          throw new Error(`config apply does not ${action} subgraphs (${name}): the diff should have refused or left it alone`);
        default:
          assertNever(action, 'change action');
      }
    }
  },
};
