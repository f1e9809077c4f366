// Request hardening: body size, CSRF prevention, document limits (graphql-armor), suggestions off in production.
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { FetchAPI, Plugin } from 'graphql-yoga';
import { configSchema } from '../config/schema.js';
import { requestError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';

export interface HardeningOptions {
  /**
   * Production: errors carry no "Did you mean …?" suggestions. Default false. (Introspection in
   * production is use-introspection-permission's: it needs the caller, known only after authentication.)
   */
  production?: boolean;
  /** Largest accepted request body, in bytes: beyond it 413 REQUEST_TOO_LARGE, before the body is parsed. Default from config (1 MiB). */
  maxBodyBytes?: number;
  /** Deepest field nesting of an operation (fragments count their fields, not themselves). Default from config (12). */
  maxDepth?: number;
  /** Most aliases in an operation (`__typename` aliases are free). Default from config (30). */
  maxAliases?: number;
  /** Most directives in an operation. Default from config (50). */
  maxDirectives?: number;
  /** Most lexical tokens in a document, counted while parsing: a longer one is refused before it is parsed whole. Default from config (2000). */
  maxTokens?: number;
  /** CSRF prevention: a GET or form-like POST must carry one of `CSRF_HEADERS`. Default true. */
  csrf?: boolean;
}

/**
 * Headers that mark a request as one a browser could not send cross-site without a CORS preflight:
 * yoga's own, the vendor-neutral name, and the one Apollo clients send.
 */
const CSRF_HEADERS: readonly string[] = ['x-graphql-yoga-csrf', 'graphql-require-preflight', 'apollo-require-preflight'];

/** The defaults: the config schema's, so a router and a test building the plugins alone agree. */
const HARDENING_DEFAULTS: Readonly<Required<HardeningOptions>> = Object.freeze({
  production: false,
  maxBodyBytes: configSchema.shape.maxBodyBytes.parse(undefined),
  maxDepth: configSchema.shape.maxDepth.parse(undefined),
  maxAliases: configSchema.shape.maxAliases.parse(undefined),
  maxDirectives: configSchema.shape.maxDirectives.parse(undefined),
  maxTokens: configSchema.shape.maxTokens.parse(undefined),
  csrf: true,
});

/**
 * The hardening plugins, in the order they act on a request:
 * 1. Body size (request parse): a `content-length` over the limit is refused at once; a body without
 *    one (chunked) is counted while the request parser reads it and reading stops past the limit.
 * 2. CSRF prevention (request parse): yoga's plugin, its refusal turned into 400 BAD_REQUEST.
 * 3. graphql-armor: the token limit at parse time (a huge document is never parsed whole), depth,
 *    aliases and directives as validation rules; armor's own cost limit stays off (use-cost-limit
 *    owns cost). Refusals are 400 with GRAPHQL_PARSE_FAILED (tokens) or GRAPHQL_VALIDATION_FAILED
 *    and `extensions.limit = { name, max, found? }`; they are GraphQLErrors without an original
 *    error, so yoga's masking lets them through. No subgraph is called.
 * 4. Production only: suggestions removed from error messages. Introspection is not refused here:
 *    in production it needs a permission rule (use-introspection-permission, decision 036).
 */
export function useHardening(options: HardeningOptions = {}): Plugin[] {
  const settings = { ...HARDENING_DEFAULTS, ...definedOnly(options) };
  const plugins: Plugin[] = [useBodyLimit(settings.maxBodyBytes)];
  if (settings.csrf) plugins.push(useCsrf());
  plugins.push(...armorPlugins(settings));
  if (settings.production) plugins.push(useNoSuggestions());
  return plugins;
}

function definedOnly(options: HardeningOptions): HardeningOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

// --- 1. Body size -------------------------------------------------------------------------------

function tooLarge(maxBytes: number): GraphQLError {
  return requestError('REQUEST_TOO_LARGE', `The request body exceeds the limit of ${maxBytes} bytes.`, {
    extensions: { limit: { name: 'maxBodyBytes', max: maxBytes } },
    // The rest of the body is never read: the connection closes with the answer (RFC 9110 §15.5.14),
    // rather than staying busy until the request timeout, which also holds a draining server open.
    httpHeaders: { connection: 'close' },
  });
}

/**
 * Runs in `onRequestParse`, after yoga chose the request parser and before it reads the body.
 * With a `content-length` (RFC 9110 §8.6) the size is known, and Node's HTTP parser never delivers
 * more than it announces, so the header alone decides. Without one (chunked transfer coding) the
 * parser reads through a counting stream that errors once the limit is passed; the parser's own
 * error (it may wrap ours as "invalid JSON") is then replaced by the 413.
 */
function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null) {
        if (/^\d+$/.test(length) && Number(length) > maxBytes) throw tooLarge(maxBytes);
        return;
      }
      if (request.method === 'GET' || request.method === 'HEAD' || !requestParser || !request.body) return;
      setRequestParser(async function parseLimitedBody(original) {
        const counter = { exceeded: false };
        try {
          return await requestParser(limitBody(original, maxBytes, fetchAPI, counter));
        } catch (error) {
          throw counter.exceeded ? tooLarge(maxBytes) : error;
        }
      });
    },
  };
}

function limitBody(request: Request, maxBytes: number, fetchAPI: FetchAPI, counter: { exceeded: boolean }): Request {
  const body = request.body;
  if (!body) return request;
  // A native stream must go through the native TransformStream, a ponyfill one through the ponyfill's.
  const Transform = body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  let received = 0;
  const limited = body.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > maxBytes) {
          counter.exceeded = true;
          controller.error(tooLarge(maxBytes));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new fetchAPI.Request(request.url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    body: limited,
    duplex: 'half',
  } as RequestInit);
}

// --- 2. CSRF prevention -------------------------------------------------------------------------

/**
 * Yoga's plugin accepts a request whose content type a cross-site form cannot send (anything but
 * `application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain`, or none) or that carries
 * one of the headers; it refuses the rest with an uncoded 403, which this turns into a catalogue error.
 */
function useCsrf(): Plugin {
  const csrf = useCSRFPrevention({ requestHeaders: [...CSRF_HEADERS] });
  const message = `Refused as a possible cross-site request forgery: send a JSON body (content-type: application/json) or one of the headers ${CSRF_HEADERS.join(', ')}.`;
  return {
    onRequestParse(payload) {
      try {
        // Synchronous in the plugin (it only reads headers), so a refusal is thrown right here.
        return csrf.onRequestParse?.(payload as never);
      } catch (error) {
        if (error instanceof GraphQLError) throw requestError('BAD_REQUEST', message);
        throw error;
      }
    },
  };
}

// --- 3. Document limits (graphql-armor) ---------------------------------------------------------

type LimitName = 'maxDepth' | 'maxAliases' | 'maxDirectives' | 'maxTokens';

const LIMIT_SUBJECTS: Record<LimitName, string> = {
  maxDepth: 'Query depth',
  maxAliases: 'Number of aliases',
  maxDirectives: 'Number of directives',
  maxTokens: 'Number of tokens',
};

function limitError(code: ErrorCode, name: LimitName, max: number, armorMessage: string): GraphQLError {
  // Armor's message ends in "…, found N." for the validation limits; the token count stops at the limit.
  const found = /found (\d+)/.exec(armorMessage)?.[1];
  const message = `${LIMIT_SUBJECTS[name]} exceeds the limit of ${max}${found ? ` (found ${found})` : ''}.`;
  return requestError(code, message, {
    extensions: { limit: { name, max, ...(found ? { found: Number(found) } : {}) } },
  });
}

/**
 * Armor's rejection callback, with `propagateOnRejection: false` so armor neither throws nor reports
 * its own error ("Syntax Error: …", no code). In validation the catalogue error is reported to the
 * context, so it is returned with any other validation error; at parse time (no context) it is
 * thrown, which aborts the parser.
 */
function rejectWith(code: ErrorCode, name: LimitName, max: number) {
  return function onLimitExceeded(context: ValidationContext | null, error: GraphQLError): void {
    const refusal = limitError(code, name, max, error.message);
    if (context) context.reportError(refusal);
    else throw refusal;
  };
}

function armorPlugins(settings: Required<HardeningOptions>): Plugin[] {
  const limit = (code: ErrorCode, name: LimitName) => ({ n: settings[name], propagateOnRejection: false, onReject: [rejectWith(code, name, settings[name])] });
  const armor = new EnvelopArmor({
    maxTokens: limit('GRAPHQL_PARSE_FAILED', 'maxTokens'),
    maxDepth: { ...limit('GRAPHQL_VALIDATION_FAILED', 'maxDepth'), flattenFragments: true },
    maxAliases: limit('GRAPHQL_VALIDATION_FAILED', 'maxAliases'),
    maxDirectives: limit('GRAPHQL_VALIDATION_FAILED', 'maxDirectives'),
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: settings.production, mask: '' },
  });
  return armor.protect().plugins as Plugin[];
}

// --- 4. Suggestions (production) ----------------------------------------------------------------

/** Every "Did you mean …?" graphql-js writes: fields, arguments and types (also removed by armor), enum values, input fields. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

function withoutSuggestions(errors: readonly GraphQLError[] | undefined): void {
  for (const error of errors ?? []) {
    if (error.message.includes('Did you mean')) error.message = error.message.replace(SUGGESTION, '');
  }
}

/**
 * Armor hides field, argument and type suggestions in validation errors. This catches the rest:
 * enum-value suggestions in validation, and the variable-coercion errors of execution (an unknown
 * input field or enum value in `variables`), which armor never sees.
 */
function useNoSuggestions(): Plugin {
  return {
    onValidate() {
      return function hideValidationSuggestions({ valid, result }) {
        if (!valid) withoutSuggestions(result as readonly GraphQLError[]);
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result }) {
          if (!(Symbol.asyncIterator in result)) withoutSuggestions(result.errors);
        },
      };
    },
  };
}
