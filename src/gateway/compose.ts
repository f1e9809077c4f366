// Composition: the registered subgraph SDLs become one Federation v2 supergraph, or a list of readable errors.
import { parse, type DocumentNode, GraphQLError } from 'graphql';
import { composeServices } from '@theguild/federation-composition';

export interface SubgraphDefinition {
  name: string;
  url: string;
  sdl: string;
}

export interface CompositionIssue {
  /** The composition rule's code (e.g. INVALID_FIELD_SHARING), or PARSE_ERROR for an unreadable SDL. */
  code: string;
  message: string;
}

export type CompositionOutcome =
  | { ok: true; supergraphSdl: string; /** The API schema clients see (no federation or join directives, no @inaccessible parts). */ publicSdl: string }
  | { ok: false; errors: CompositionIssue[] };

function parseSubgraph(definition: SubgraphDefinition): DocumentNode | CompositionIssue {
  try {
    return parse(definition.sdl, { noLocation: false });
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : String(error);
    return { code: 'PARSE_ERROR', message: `[${definition.name}] ${message}` };
  }
}

/**
 * Composes the subgraphs (sorted by name, so the same set always yields the same supergraph).
 * Never throws for bad input: every problem comes back as an issue a schema owner can act on.
 */
export function composeSupergraph(subgraphs: readonly SubgraphDefinition[]): CompositionOutcome {
  if (subgraphs.length === 0) return { ok: false, errors: [{ code: 'NO_SUBGRAPHS', message: 'no subgraph is registered' }] };
  const sorted = [...subgraphs].sort((a, b) => a.name.localeCompare(b.name));
  const services = [];
  const errors: CompositionIssue[] = [];
  for (const definition of sorted) {
    const typeDefs = parseSubgraph(definition);
    if ('kind' in typeDefs) services.push({ name: definition.name, url: definition.url, typeDefs });
    else errors.push(typeDefs);
  }
  if (errors.length > 0) return { ok: false, errors };
  let result;
  try {
    result = composeServices(services);
  } catch (error) {
    // The composer should report, not throw; if it throws anyway the publish is refused the same way.
    return { ok: false, errors: [{ code: 'COMPOSITION_FAILED', message: (error as Error).message }] };
  }
  if (result.errors) {
    return {
      ok: false,
      errors: result.errors.map((error) => ({ code: String(error.extensions?.code ?? 'COMPOSITION_ERROR'), message: error.message })),
    };
  }
  return { ok: true, supergraphSdl: result.supergraphSdl, publicSdl: result.publicSdl };
}
