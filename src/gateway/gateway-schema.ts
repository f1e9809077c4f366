// Turns a supergraph SDL into the executable, stitched gateway schema, with our own executor per subgraph.
import type { GraphQLSchema } from 'graphql';
import type { Executor } from '@graphql-tools/utils';
import { getStitchedSchemaFromSupergraphSdl } from '@graphql-tools/federation';

export interface SubgraphEndpoint {
  /** The subgraph's name as registered (the supergraph's join__graph name). */
  name: string;
  url: string;
}

export interface GatewaySchemaOptions {
  /** Makes the executor for one subgraph; called once per subgraph per composition. */
  executorFor(subgraph: SubgraphEndpoint): Executor;
}

export interface GatewaySchema {
  schema: GraphQLSchema;
  subgraphs: SubgraphEndpoint[];
}

/**
 * Builds the stitched schema. Entity look-ups are batched per subgraph and type through DataLoader
 * (batch delegation), and `batch: true` merges the root calls to one subgraph made in the same tick
 * into one request, so a page fans out as one request per subgraph that it needs.
 */
export function buildGatewaySchema(supergraphSdl: string, options: GatewaySchemaOptions): GatewaySchema {
  const subgraphs: SubgraphEndpoint[] = [];
  const schema = getStitchedSchemaFromSupergraphSdl({
    supergraphSdl,
    batch: true,
    onSubschemaConfig(config) {
      const endpoint = { name: config.name, url: config.endpoint };
      subgraphs.push(endpoint);
      config.executor = options.executorFor(endpoint);
    },
  });
  return { schema, subgraphs };
}
