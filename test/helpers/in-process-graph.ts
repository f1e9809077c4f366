// A supergraph of in-process subgraphs for planner tests: composed, planned and run without HTTP.
import { execute, parse, print, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { composeSupergraph } from '../../src/gateway/compose.js';
import { buildGatewaySchema } from '../../src/gateway/gateway-schema.js';
import { createPlanningExecutor, type PlanningExecutor } from '../../src/gateway/execute/planning-executor.js';

export interface InProcessSubgraph {
  name: string;
  sdl: string;
  resolvers?: Record<string, any>;
}

export interface InProcessGraph {
  planner: PlanningExecutor;
  /** The stitched API schema (the other engine). */
  schema: GraphQLSchema;
  /** Documents each subgraph received, printed, since the last `reset()`. */
  calls: Map<string, string[]>;
  reset(): void;
  /** Runs the query from its plan (for a decision that denies `denied`); throws with the reason when it has none. */
  run(text: string, variables?: Record<string, unknown>, denied?: ReadonlySet<string>): Promise<ExecutionResult>;
  /** Runs the query by stitching. */
  stitch(text: string, variables?: Record<string, unknown>): Promise<ExecutionResult>;
}

export function inProcessGraph(subgraphs: readonly InProcessSubgraph[]): InProcessGraph {
  const outcome = composeSupergraph(subgraphs.map((s) => ({ name: s.name, url: `http://${s.name}.test/graphql`, sdl: s.sdl })));
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  const schemas = new Map(subgraphs.map((s) => [s.name, buildSubgraphSchema({ typeDefs: parse(s.sdl), resolvers: s.resolvers as any })]));
  const calls = new Map<string, string[]>(subgraphs.map((s) => [s.name, []]));
  const built = buildGatewaySchema(outcome.supergraphSdl, {
    executorFor: (endpoint): Executor =>
      (async function inProcess(request: ExecutionRequest) {
        calls.get(endpoint.name)!.push(print(request.document));
        return execute({ schema: schemas.get(endpoint.name)!, document: request.document, variableValues: request.variables, contextValue: {} });
      }) as Executor,
  });
  const planner = createPlanningExecutor({ supergraph: built.supergraph, apiSchema: built.schema, executors: built.executors });
  const json = (result: ExecutionResult) => JSON.parse(JSON.stringify(result)) as ExecutionResult;
  return {
    planner,
    schema: built.schema,
    calls,
    reset: () => calls.forEach((list) => (list.length = 0)),
    async run(text, variables, denied) {
      const document: DocumentNode = parse(text);
      const plan = planner.planFor(document, undefined, denied);
      if (!plan) throw new Error(`no plan: ${planner.whyUnplanned(document, undefined)}`);
      // No incremental format on this context: always one answer.
      return json((await planner.execute(plan, { schema: built.schema, document, variableValues: variables })) as ExecutionResult);
    },
    async stitch(text, variables) {
      return json((await execute({ schema: built.schema, document: parse(text), variableValues: variables, contextValue: {} })) as ExecutionResult);
    },
  };
}
