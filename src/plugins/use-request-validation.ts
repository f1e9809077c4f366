// Malformed requests are 400 with a GraphQL errors array, before any plugin reads their parameters and before anything runs.
import { getVariableValues, GraphQLError, type ASTVisitor, type ExecutionResult, type ValidationContext } from 'graphql';
import { isAsyncIterable, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { configSchema } from '../config/schema.js';
import { requestError } from '../errors/client-error.js';
import { documentNamesOf } from '../request/document-names.js';
import { analyseOperation } from '../request/operation-analysis.js';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { ANSWER_MEDIA_TYPES, resultMediaType } from '../request/media-type.js';
import { errorResponse } from './http-error-response.js';
import { documentIdentityProblem } from './request-validation/document-identity.js';
import { JsonDepthScanner, jsonDeeperThan } from './request-validation/json-depth.js';

/** yoga's request parser type (not exported by name from the package root). */
type RequestParser = NonNullable<Parameters<NonNullable<Plugin['onRequestParse']>>[0]['requestParser']>;

export interface RequestValidationOptions {
  /** Deepest nesting of objects and arrays in a JSON request body or a JSON query parameter. Default from config (64). */
  maxJsonDepth?: number;
  /** Counts the refusals of a document named twice (`switchyard_trusted_document_refusals_total`). Default: not counted. */
  metrics?: RouterMetrics;
}

/**
 * Runs first in the plugin list, because yoga checks the parameters only after every plugin's
 * `onParams` (its own check is appended after the user plugins), and ours read them (metrics,
 * telemetry, audit): a `query` that is a number once reached a hash function and answered 500.
 * 1. Request parse: an Accept header that names none of the media types we answer in is 406, a
 *    body no parser takes is 415, both with an errors array (yoga sends them empty, the 406 only
 *    after executing). A JSON POST body is read chunk by chunk through a depth scan (json-depth.ts)
 *    and refused once a byte nests too deep, without JSON.parse ever seeing it; a GET's `variables`
 *    and `extensions` are scanned the same way. Then the body is parsed as yoga's own JSON parser
 *    would (same errors for invalid JSON and non-object bodies).
 * 2. Params: every GraphQL-over-HTTP parameter must have its JSON type (`query`, `operationName`,
 *    `documentId` strings; `variables`, `extensions` objects), else 400 BAD_REQUEST naming it. Then
 *    the request must name one document, once (request-validation/document-identity.ts, decision
 *    028), whatever the trusted-documents mode: a `documentId` with the query text is 400
 *    AMBIGUOUS_DOCUMENT, a persisted-query hash with a text it is not the hash of 400
 *    PERSISTED_QUERY_HASH_MISMATCH. Before every plugin that reads the parameters, so nothing
 *    records the request under either name; the refusal's code joins the request state, so the
 *    audit row and the access line still name it.
 * 3. Validation: an operation whose type the schema has no root for (a `subscription` on a graph
 *    without subscriptions) is a validation error, 400 GRAPHQL_VALIDATION_FAILED, as graphql-js 17's
 *    KnownOperationTypesRule makes it (GraphQL spec, "Operation Type Existence"); graphql 16 only
 *    failed it at execution.
 * 4. Execution: variables are coerced before anything runs (a value that fails is 400 BAD_REQUEST,
 *    no subgraph called), and a result without `data` is a request error (GraphQL spec 7.1.1: nothing was
 *    executed, e.g. variables that fail coercion). Its errors get BAD_REQUEST when they have no code
 *    and HTTP 400 (GraphQL over HTTP, and what yoga's own executor does).
 */
export function useRequestValidation(options: RequestValidationOptions = {}): Plugin {
  const maxJsonDepth = options.maxJsonDepth ?? configSchema.shape.maxJsonDepth.parse(undefined);
  return {
    onRequestParse({ request, url, serverContext, requestParser, setRequestParser, fetchAPI }) {
      // Every refusal here happens when the parser runs, after every plugin's onRequestParse (metrics
      // start their clock there, CSRF prevention refuses there first) and before anything executes.
      if (!resultMediaType(request.headers.get('accept'))) {
        // Yoga would execute first and then answer 406 with an empty body; this refuses before, with errors.
        setRequestParser(function refuseUnacceptable() {
          return errorResponse(fetchAPI, request, serverContext, 'NOT_ACCEPTABLE', notAcceptableMessage);
        });
        return;
      }
      if (!requestParser) {
        // Yoga answers 415 with an empty body.
        setRequestParser(function refuseMediaType() {
          throw requestError('UNSUPPORTED_MEDIA_TYPE', `A GraphQL request body must be application/json (or application/graphql+json, application/x-www-form-urlencoded, multipart/form-data, application/graphql).`);
        });
        return;
      }
      let parse = requestParser;
      if (request.method === 'GET') {
        const parseGet = requestParser;
        parse = function parseGetWithinDepth(req) {
          for (const name of ['variables', 'extensions']) {
            const value = url.searchParams.get(name);
            if (value && jsonDeeperThan(value, maxJsonDepth)) throw tooDeep(maxJsonDepth);
          }
          return parseGet(req);
        };
      } else if (request.method === 'POST' && isJsonContentType(request.headers.get('content-type'))) {
        parse = depthLimitedJsonParser(maxJsonDepth);
      }
      setRequestParser(unreadableAsBadRequest(parse));
    },
    onResultProcess({ request, serverContext, resultProcessor, setResultProcessor }) {
      // A refusal before the parser (a method yoga refuses) meets yoga's result processors with the
      // same Accept header, which find none and answer 406 with an empty body: answer it with errors.
      if (resultProcessor) return;
      setResultProcessor(function refuseUnacceptableResult(_result, fetchAPI) {
        return errorResponse(fetchAPI, request, serverContext, 'NOT_ACCEPTABLE', notAcceptableMessage);
      }, 'application/json');
    },
    onParams({ params, request, context }) {
      checkParams(params);
      const problem = documentIdentityProblem(documentNamesOf(params, request));
      if (problem) {
        options.metrics?.trustedDocumentRefusals.inc({ code: problem.code });
        requestStateOf(context).refusal = problem.code;
        throw requestError(problem.code, problem.message);
      }
    },
    onValidate({ addValidationRule }) {
      addValidationRule(KnownOperationTypesRule);
    },
    onExecute({ args, setResultAndStopExecution }) {
      // Variables are coerced here, before any plugin or the plan runner acts on them: the plan
      // runner fetches first and lets graphql-js coerce when it shapes the answer, which called
      // subgraphs for a request that was then refused.
      // Before use-request-state: the document's operation analysis (memoised; it reads the same one).
      const definitions = analyseOperation(args.document, args.operationName).operation?.variableDefinitions;
      if (definitions?.length) {
        const coerced = getVariableValues(args.schema, definitions, (args.variableValues ?? {}) as Record<string, unknown>, { maxErrors: 20 });
        if (coerced.errors) {
          setResultAndStopExecution({ errors: coerced.errors.map((error) => requestError('BAD_REQUEST', error.message, { nodes: error.nodes })) });
          return;
        }
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result) || 'data' in result || !result.errors?.length) return;
          setResult(asRequestError(result));
        },
      };
    },
  };
}

const notAcceptableMessage = `The Accept header names no media type this endpoint answers in: accept ${ANSWER_MEDIA_TYPES.join(', ')}.`;

// --- 1. JSON depth ------------------------------------------------------------------------------

function tooDeep(maxDepth: number): GraphQLError {
  return requestError('BAD_REQUEST', `The request nests JSON objects and arrays deeper than the limit of ${maxDepth}.`, {
    extensions: { limit: { name: 'maxJsonDepth', max: maxDepth } },
  });
}

/** The media types yoga's JSON parser takes (`application/json`, `application/graphql+json`). */
function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
  return mediaType === 'application/json' || mediaType === 'application/graphql+json';
}

/**
 * Yoga's parsers throw plain errors for some malformed requests (a GET whose `variables` is not
 * JSON, a broken form or multipart body), which then answer 500: whatever the parser could not
 * read is the client's doing, so it is 400 BAD_REQUEST.
 */
function unreadableAsBadRequest(parse: RequestParser): RequestParser {
  return async function parseOrRefuse(request) {
    try {
      return await parse(request);
    } catch (error) {
      if (error instanceof GraphQLError) throw error;
      throw badBody('The request could not be read: its body or query string is not valid JSON, form or multipart data.');
    }
  };
}

function badBody(message: string): GraphQLError {
  return requestError('BAD_REQUEST', message);
}

/**
 * Replaces yoga's JSON parser (which calls `request.json()` at once): reads the body stream, feeds
 * every chunk to the depth scan, stops scanning and keeping chunks at the first one too deep (and
 * refuses the request once the body is drained), else parses the whole text once. A body-size
 * limit installed after this plugin (use-hardening) wraps this parser, and its counting stream's
 * error reaches the reader here first.
 */
function depthLimitedJsonParser(maxDepth: number): RequestParser {
  return async function parseJsonWithinDepth(request: Request): Promise<GraphQLParams> {
    const scanner = new JsonDepthScanner(maxDepth);
    const chunks: Uint8Array[] = [];
    let size = 0;
    const body = request.body;
    if (body) {
      const reader = body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        // Past the limit, the rest is read and dropped unscanned (the body-size limit bounds it):
        // cancelling the stream would reset a keep-alive connection the client is about to reuse.
        if (scanner.exceeded || !scanner.feed(value)) continue;
        chunks.push(value);
        size += value.byteLength;
      }
    }
    if (scanner.exceeded) throw tooDeep(maxDepth);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
    } catch {
      throw badBody('POST body sent invalid JSON.');
    }
    if (parsed === null || typeof parsed !== 'object') throw badBody(`POST body is expected to be an object but received ${parsed === null ? 'null' : typeof parsed}.`);
    return parsed as GraphQLParams;
  };
}

// --- 2. Parameter types -------------------------------------------------------------------------

const STRING_PARAMS = ['query', 'operationName', 'documentId'] as const;
const OBJECT_PARAMS = ['variables', 'extensions'] as const;

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/**
 * GraphQL over HTTP, "Request Parameters": absent or null, or of the one JSON type each parameter has.
 * Our own because yoga's check (`checkGraphQLQueryParams`) is not exported from the package root,
 * runs after the user plugins, and leaves `operationName` and `documentId` unchecked.
 */
function checkParams(params: GraphQLParams): void {
  const record = params as unknown as Record<string, unknown>;
  for (const name of STRING_PARAMS) {
    const value = record[name];
    if (value != null && typeof value !== 'string') throw badParam(name, 'a string', value);
  }
  for (const name of OBJECT_PARAMS) {
    const value = record[name];
    if (value != null && jsonType(value) !== 'object') throw badParam(name, 'an object', value);
  }
}

function badParam(name: string, expected: string, value: unknown): GraphQLError {
  const type = jsonType(value);
  return requestError('BAD_REQUEST', `The "${name}" parameter must be ${expected}, but it is ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}.`);
}

// --- 3. Operation types -------------------------------------------------------------------------

/** graphql-js 17's KnownOperationTypesRule, for graphql 16: the schema must have a root type for each operation. */
function KnownOperationTypesRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      if (!schema.getRootType(node.operation)) {
        context.reportError(new GraphQLError(`The ${node.operation} operation is not supported by the schema.`, { nodes: node }));
      }
    },
  };
}

// --- 4. Request errors --------------------------------------------------------------------------

function asRequestError(result: ExecutionResult): ExecutionResult {
  const errors = result.errors!.map((error) => {
    const extensions = error.extensions ?? {};
    // A refusal that chose its own status (cost 400, queue 503, forbidden 403) keeps it; an unexpected error stays masked.
    const unexpected = error.originalError !== undefined && error.originalError !== null && !(error.originalError instanceof GraphQLError);
    if ((extensions.http as { status?: number } | undefined)?.status !== undefined || unexpected) return error;
    if (typeof extensions.code === 'string') {
      // 400 for any code yoga or graphql-js set (not all are in our catalogue): GraphQL over HTTP answers request errors with 400.
      return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions: { ...extensions, http: { ...(extensions.http as object | undefined), status: 400 } } });
    }
    return requestError('BAD_REQUEST', error.message, { nodes: error.nodes });
  });
  return { ...result, errors };
}
