// Subscriptions pass the same gate as queries: envelop runs `onSubscribe`, not `onExecute`, for them.
import type { Plugin } from 'graphql-yoga';

type ExecutePayload = Parameters<NonNullable<Plugin['onExecute']>>[0];

/**
 * The plugin with its `onExecute` run for subscriptions too, at subscribe. Only for hooks that read
 * the arguments, fill the request state or refuse the request (`setResultAndStopExecution`): they
 * never replace the execute function, and their result hooks (a query's) are not wanted on a stream.
 */
export function alsoOnSubscribe(plugin: Plugin): Plugin {
  const onExecute = plugin.onExecute;
  if (!onExecute) return plugin;
  return {
    ...plugin,
    onSubscribe(payload) {
      const refused = onExecute({
        args: payload.args,
        context: payload.args.contextValue,
        executeFn: undefined as unknown as ExecutePayload['executeFn'],
        setExecuteFn: () => {
          throw new Error('alsoOnSubscribe: a hook that replaces execution has no meaning at subscribe');
        },
        setResultAndStopExecution: payload.setResultAndStopExecution,
        extendContext: payload.extendContext,
      } as unknown as ExecutePayload);
      // A promise (a hook that waits, e.g. a Redis bucket) is waited for; result hooks are not kept.
      if (refused instanceof Promise) return refused.then(() => undefined);
      return undefined;
    },
  };
}
