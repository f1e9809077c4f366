// Subscriptions through the gate: planned like queries, admitted under the live limits, and written in the transport the client reads.
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { requestError } from '../errors/client-error.js';
import { planOfRequest } from '../gateway/plan/request-plan.js';
import { requestStateOf } from '../request/request-state.js';
import { subscriptionFramingOf } from '../streaming/negotiate-stream.js';
import type { HttpSubscriptionStreams } from '../subscriptions/http-subscriptions.js';
import type { OpenSubscriptions } from '../subscriptions/open-subscriptions.js';
import { STREAM_BRIDGE, type StreamBridge } from '../subscriptions/stream-bridge.js';
import { SubscriptionIterator } from '../subscriptions/subscription-iterator.js';

export interface SubscriptionsPluginOptions {
  subscriptions: OpenSubscriptions;
  /** The router's HTTP subscription streams (SSE, multipart). */
  streams: HttpSubscriptionStreams;
}

/**
 * 1. At subscribe (after authentication, authorization, cost and rate limits, which run their
 *    `onSubscribe` too: subscribe-hooks.ts), the subscription's plan is looked up like a query's.
 *    A subscription the planner cannot plan is refused with QUERY_PLANNING_FAILED: no stitching.
 * 2. The live limits admit it or refuse it with SUBSCRIPTION_LIMIT (429, `Retry-After`).
 * 3. Its events come from OpenSubscriptions (upstream share, completion per event, ends).
 * 4. The wire (decision 032): the router's transports take the subscription itself, not the stream
 *    yoga made of it, and write each event as it is completed. The WebSocket transport and the HTTP
 *    one in front of the pipeline (http-subscriptions.ts) get it through the bridge; an SSE or
 *    multipart request that came another way gets a response whose body the subscription writes.
 *    The subscription reaches them on the request state (`state.subscription`), where `open` put
 *    it. So an open subscription holds neither yoga's context nor an iterator chain. Any other reader
 *    (yoga's own multipart processor, for a client without `subscriptionSpec`) iterates it
 *    (SubscriptionIterator, which attaches only when first pulled).
 */
export function useSubscriptions(options: SubscriptionsPluginOptions): Plugin {
  const { subscriptions, streams } = options;
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
      // Only what the stream needs: never the context, which holds the whole request.
      const { document, operationName, variableValues } = args;
      setSubscribeFn(() => new SubscriptionIterator(subscriptions.open({ args: { document, operationName, variableValues }, state, plan })));
    },
    onResultProcess({ request, result, setResultProcessor, serverContext }) {
      const bridge = (serverContext as Record<symbol, StreamBridge | undefined>)[STREAM_BRIDGE];
      const subscription = isAsyncIterable(result) ? requestStateOf(serverContext).subscription : undefined;
      if (bridge?.transport === 'ws' || (bridge && subscription)) {
        // The transport takes the subscription from the request state; the response carries the plugins' headers.
        setResultProcessor((processed, fetchAPI) => {
          if (!subscription) bridge.result = processed as StreamBridge['result'];
          return new fetchAPI.Response(null, { status: 200 });
        }, 'application/json');
        return;
      }
      if (!subscription) return;
      const framing = subscriptionFramingOf(request.headers.get('accept'));
      if (!framing) return;
      setResultProcessor((_processed, fetchAPI) => streams.response(subscription, framing, fetchAPI), framing === 'multipart' ? 'multipart/mixed' : 'text/event-stream');
    },
  };
}
