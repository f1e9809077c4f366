// Turns a supergraph SDL into the executable, stitched gateway schema, with our own executor per subgraph.
import { GraphQLSchema } from 'graphql';
import { GraphQLDeferDirective, GraphQLStreamDirective, type Executor } from '@graphql-tools/utils';
import { getStitchedSchemaFromSupergraphSdl } from '@graphql-tools/federation';
import { Supergraph } from './supergraph/supergraph.js';

export interface SubgraphEndpoint {
  /** The subgraph's name as registered (the supergraph's join__graph name). */
  name: string;
  url: string;
}

export interface GatewaySchemaOptions {
  /** Makes the executor for one subgraph; called once per subgraph per composition. */
  executorFor(subgraph: SubgraphEndpoint): Executor;
  /**
   * Progressive-override labels that are switched on (`@override(from:, label: "beta-grades")`).
   * `percent(x)` labels need no entry; any other label not listed leaves the field with the
   * subgraph it is overridden from. Default: none.
   */
  overrideLabels?: ReadonlySet<string>;
}

export interface GatewaySchema {
  schema: GraphQLSchema;
  subgraphs: SubgraphEndpoint[];
  /** The supergraph it was built from (the same object when one was passed in). */
  supergraph: Supergraph;
  /** Each subgraph's executor, by its `join__Graph` value (what query plans call). */
  executors: Map<string, Executor>;
}

/**
 * Builds the stitched schema. Entity look-ups are batched per subgraph and type through DataLoader
 * (batch delegation), and `batch: true` merges the root calls to one subgraph made in the same tick
 * into one request, so a page fans out as one request per subgraph that it needs.
 */
export function buildGatewaySchema(supergraphOrSdl: Supergraph | string, options: GatewaySchemaOptions): GatewaySchema {
  const supergraph = typeof supergraphOrSdl === 'string' ? Supergraph.fromSdl(supergraphOrSdl) : supergraphOrSdl;
  // The supergraph names subgraphs twice: the `join__Graph` enum value (PRODUCT), which the stitching
  // layer reports, and `@join__graph(name: "product")`, the name schema owners published and ops see.
  const names = supergraph.subgraphNames;
  const subgraphs: SubgraphEndpoint[] = [];
  const executors = new Map<string, Executor>();
  const stitched = getStitchedSchemaFromSupergraphSdl({
    supergraphSdl: supergraph.document,
    batch: true,
    handleProgressiveOverride: (label) => options.overrideLabels?.has(label) ?? false,
    onSubschemaConfig(config) {
      const endpoint = { name: names.get(config.name) ?? config.name, url: config.endpoint };
      subgraphs.push(endpoint);
      config.executor = options.executorFor(endpoint);
      executors.set(config.name, config.executor);
    },
  });
  return { schema: withIncrementalDirectives(stitched), subgraphs, supergraph, executors };
}

/**
 * The API schema declares `@defer` and `@stream` (incremental delivery RFC), so a document using
 * them validates: the query plans answer `@defer` in payloads (gateway/deliver/) and `@stream` as a
 * whole list, a hint a server may ignore. Declared here, once per composition, because yoga's
 * defer-stream plugin would otherwise replace the schema object, and a request's plan is found by
 * its schema's identity (request-plan.ts).
 */
function withIncrementalDirectives(schema: GraphQLSchema): GraphQLSchema {
  const missing = [GraphQLDeferDirective, GraphQLStreamDirective].filter((directive) => !schema.getDirective(directive.name));
  if (missing.length === 0) return schema;
  const declared = new GraphQLSchema({ ...schema.toConfig(), directives: [...schema.getDirectives(), ...missing] });
  declared.extensions = schema.extensions;
  return declared;
}
