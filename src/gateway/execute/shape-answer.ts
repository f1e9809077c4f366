// The client's answer from a plan run's merged tree: the compiled projection (decision 013), graphql-js's `execute` its reference.
import { buildASTSchema, execute, parse, printSchema, type ExecutionArgs, type ExecutionResult, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { createAnswerProjector, interfaceObjectTypeResolver, type AnswerProjector, type Projection } from '../plan/project-answer.js';

/** How an answer is shaped (PlanningExecutorOptions.projection documents each). */
export type ProjectionMode = 'compiled' | 'graphql-js' | 'verify';

/** Told each difference between the compiled projection and graphql-js (`verify` only): a bug. */
export type ProjectionMismatch = (operationName: string | undefined, difference: string) => void;

/** Shapes one answer: the request's arguments, the merged tree, the request's variables. */
export type ShapeAnswer = (args: ExecutionArgs, tree: Record<string, unknown>, variables: Record<string, unknown> | undefined) => Promise<ExecutionResult>;

/** Reads the merged tree by response key: subgraph answers carry the client's aliases. */
const fromResponseKey: GraphQLFieldResolver<Record<string, unknown>, unknown> = function fromResponseKey(source, _args, _context, info) {
  return source[info.path.key];
};

/**
 * Shapes the client's answer from the merged tree (decision 013): `compiled`, the compiled
 * projection; `graphql-js`, its reference (`execute` over resolvers that read the tree, on a copy of
 * the API schema without resolvers; abstract types resolve by `__typename`); `verify`, both, the
 * answer graphql-js's. The compiled projection hands introspection to graphql-js too.
 */
export function createAnswerShaper(apiSchema: GraphQLSchema, mode: ProjectionMode, onMismatch: ProjectionMismatch | undefined): { shape: ShapeAnswer; projector: AnswerProjector } {
  const projectionSchema = buildASTSchema(parse(printSchema(apiSchema), { noLocation: true }), { assumeValid: true, assumeValidSDL: true });
  const projector = createAnswerProjector(projectionSchema);
  return { projector, shape: async function shapeAnswer(args, tree, variables) {
    const projection = mode === 'graphql-js' ? undefined : projector.projectionOf(args.document, args.operationName, variables);
    if (projection && mode === 'compiled') return projection(tree);
    const result = (await execute({
      schema: projectionSchema,
      document: args.document,
      rootValue: tree,
      contextValue: args.contextValue,
      variableValues: args.variableValues,
      operationName: args.operationName,
      fieldResolver: fromResponseKey,
      typeResolver: interfaceObjectTypeResolver,
    })) as ExecutionResult;
    if (projection) verifyProjection(projection, tree, result, args.operationName ?? undefined, onMismatch);
    return result;
  } };
}

/** Compares the compiled projection's answer with graphql-js's: data, then each error's message, path, locations, extensions and kind. */
function verifyProjection(projection: Projection, tree: Record<string, unknown>, reference: ExecutionResult, operationName: string | undefined, onMismatch: ProjectionMismatch | undefined): void {
  let compiled: ExecutionResult;
  try {
    compiled = projection(tree);
  } catch (error) {
    onMismatch?.(operationName, `the compiled projection threw: ${(error as Error).message}`);
    return;
  }
  const text = (result: ExecutionResult) =>
    JSON.stringify({ data: result.data, errors: result.errors?.map((error) => ({ ...error.toJSON(), kind: error.originalError?.constructor.name })) });
  const [a, b] = [text(compiled), text(reference)];
  if (a !== b) onMismatch?.(operationName, `compiled ${a} vs graphql-js ${b}`);
}
