// A wait that gives up: the one bound of every close-with-timeout (the audit writer, the operation recorder, subscriptions at shutdown).
// It imports nothing, so it sits in the lowest layer, where every layer above may use it.

/**
 * Waits for `work` at most `timeoutMs` ms:
 * 1. 'done' when `work` resolves first; its rejection, when it rejects first.
 * 2. 'expired' when the time runs out first. `work` is not cancelled: it goes on, and a later rejection
 *    is caught here, so it never becomes an unhandled one.
 * 3. The timer is cleared either way: an early answer leaves nothing armed. It is not unref'd: a
 *    process closing waits for the bound, as it would for the work.
 */
export async function waitWithin(work: PromiseLike<unknown>, timeoutMs: number): Promise<'done' | 'expired'> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'expired');
  });
  try {
    return await Promise.race([Promise.resolve(work).then(() => 'done' as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}
