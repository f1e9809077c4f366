// Subscriptions through the gate: planned like queries, admitted under the live limits, and written in the transport the client reads.
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { requestError } from '../errors/client-error.js';
import { planOfRequest } from '../gateway/plan/request-plan.js';
import { requestStateOf } from '../request/request-state.js';
import { multipartSubscriptionResponse, readsMultipartSubscriptions } from '../subscriptions/multipart-subscriptions.js';
import type { OpenSubscriptions, SubscriptionTransport } from '../subscriptions/open-subscriptions.js';
import { WEBSOCKET_BRIDGE, type WebSocketBridge } from '../subscriptions/websocket-bridge.js';

export interface SubscriptionsPluginOptions {
  subscriptions: OpenSubscriptions;
  /** Heartbeat of multipart subscriptions, in ms (at most 5000 there). */
  heartbeatMs: number;
}

/** The transport a subscription request reads: the WebSocket bridge, Apollo's multipart protocol, or SSE. */
export function transportOf(context: unknown): SubscriptionTransport {
  if ((context as Record<symbol, unknown>)[WEBSOCKET_BRIDGE]) return 'ws';
  const accept = (context as Partial<YogaInitialContext>).request?.headers.get('accept');
  return readsMultipartSubscriptions(accept) ? 'multipart' : 'sse';
}

/**
 * 1. At subscribe (after authentication, authorization, cost and rate limits, which run their
 *    `onSubscribe` too: subscribe-hooks.ts), the subscription's plan is looked up like a query's.
 *    A subscription the planner cannot plan is refused with QUERY_PLANNING_FAILED: no stitching.
 * 2. The live limits admit it or refuse it with SUBSCRIPTION_LIMIT (429, `Retry-After`).
 * 3. Its events come from OpenSubscriptions (upstream share, completion per event, ends).
 * 4. The wire: SSE is yoga's own processor (GraphQL over SSE, distinct connections); Apollo's
 *    multipart protocol is written by multipart-subscriptions.ts; a request from the WebSocket
 *    transport hands its result back unserialised (the transport writes graphql-ws messages).
 */
export function useSubscriptions(options: SubscriptionsPluginOptions): Plugin {
  const { subscriptions, heartbeatMs } = options;
  return {
    onSubscribe({ args, setSubscribeFn, setResultAndStopExecution }) {
      const state = requestStateOf(args.contextValue);
      const plan = planOfRequest(state, args);
      if (!plan?.subscription) {
        const reason = plan?.unsatisfiable ?? state.graph.planner?.whyUnplanned(args.document, args.operationName) ?? 'query plans are off on this router';
        setResultAndStopExecution({ errors: [requestError('QUERY_PLANNING_FAILED', `The subscription cannot be planned: ${reason}.`)] });
        return;
      }
      const refusal = subscriptions.admit(state.operationName, state.principal);
      if (refusal) {
        setResultAndStopExecution({ errors: [refusal] });
        return;
      }
      const transport = transportOf(args.contextValue);
      setSubscribeFn(() => subscriptions.open({ args, state, plan, transport }));
    },
    onResultProcess({ request, result, setResultProcessor, serverContext }) {
      const bridge = (serverContext as Record<symbol, WebSocketBridge | undefined>)[WEBSOCKET_BRIDGE];
      if (bridge) {
        setResultProcessor((processed, fetchAPI) => {
          bridge.result = processed as ExecutionResult | AsyncIterable<ExecutionResult>;
          return new fetchAPI.Response(null, { status: 200 });
        }, 'application/json');
        return;
      }
      if (!isAsyncIterable(result) || requestStateOf(serverContext).operation?.operation !== 'subscription') return;
      if (!readsMultipartSubscriptions(request.headers.get('accept'))) return;
      setResultProcessor(
        (processed, fetchAPI) => multipartSubscriptionResponse(processed as AsyncIterable<ExecutionResult>, fetchAPI, heartbeatMs, serializeResult),
        'multipart/mixed',
      );
    },
  };
}

/** A result as the client reads it: errors by their JSON form, without the `http` extension yoga keeps for itself. */
function serializeResult(result: ExecutionResult): string {
  if (!result.errors?.length) return JSON.stringify(result);
  const errors = result.errors.map((error) => {
    const json = (error as GraphQLError).toJSON?.() ?? error;
    if (!json.extensions || !('http' in json.extensions)) return json;
    const { http: _http, ...extensions } = json.extensions;
    return { ...json, extensions };
  });
  return JSON.stringify({ ...result, errors });
}
