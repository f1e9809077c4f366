// Token buckets capping the extra load (retries, hedges) sent to one subgraph, as a share of its calls.

export interface RetryBudgetOptions {
  /**
   * Tokens deposited per logical call (first attempt): the share of extra attempts allowed over time.
   * Default 0.1, i.e. at most ~10% extra calls in steady state.
   */
  ratio?: number;
  /** Most tokens saved up: the largest burst of extra attempts after a long healthy period. Default 10. */
  maxTokens?: number;
  /**
   * Tokens at creation. Default 2 (capped at `maxTokens`): enough for one early failed call to use
   * its default two retries before any deposit, while a subgraph that is down from the start costs
   * at most two extra attempts before the ratio takes over. Starting full would allow a burst of
   * `maxTokens` extra calls at boot, exactly when nothing is known about the subgraph.
   */
  initialTokens?: number;
}

/** Tokens are kept as integers in millionths, so that ten deposits of 0.1 make exactly one token. */
const UNITS_PER_TOKEN = 1_000_000;

/**
 * A retry budget in the style of gRPC retry throttling and Finagle's RetryBudget:
 * 1. Every logical call deposits `ratio` tokens (`recordCall()`), up to `maxTokens`.
 * 2. Every extra attempt (retry or hedge) must take one whole token (`tryWithdraw()`); without one
 *    it is not made. Extra load therefore stays below `ratio` of the calls, plus the saved-up burst.
 */
export class RetryBudget {
  readonly #deposit: number;
  readonly #max: number;
  #units: number;

  constructor(options: RetryBudgetOptions = {}) {
    const { ratio = 0.1, maxTokens = 10 } = options;
    const initialTokens = options.initialTokens ?? Math.min(2, maxTokens);
    if (!(ratio >= 0 && ratio <= 1)) throw new RangeError(`ratio must be between 0 and 1, got ${ratio}`);
    if (!(maxTokens >= 1) || maxTokens === Infinity) throw new RangeError(`maxTokens must be a finite number of at least 1, got ${maxTokens}`);
    if (!(initialTokens >= 0 && initialTokens <= maxTokens)) {
      throw new RangeError(`initialTokens must be between 0 and maxTokens (${maxTokens}), got ${initialTokens}`);
    }
    this.#deposit = Math.round(ratio * UNITS_PER_TOKEN);
    this.#max = Math.round(maxTokens * UNITS_PER_TOKEN);
    this.#units = Math.round(initialTokens * UNITS_PER_TOKEN);
  }

  /** Deposits `ratio` tokens for one logical call (its first attempt). */
  recordCall(): void {
    this.#units = Math.min(this.#max, this.#units + this.#deposit);
  }

  /** Takes one token for a retry or hedge; `false` (and nothing taken) when less than one is saved. */
  tryWithdraw(): boolean {
    if (this.#units < UNITS_PER_TOKEN) return false;
    this.#units -= UNITS_PER_TOKEN;
    return true;
  }

  /** Whether `count` tokens could be taken now. */
  canWithdraw(count = 1): boolean {
    return this.#units >= count * UNITS_PER_TOKEN;
  }

  /** Tokens saved (fractional). */
  get tokens(): number {
    return this.#units / UNITS_PER_TOKEN;
  }
}

/**
 * Takes one token from each budget, or from none if any of them is short: a hedge must fit both the
 * shared extra-load budget and the hedge budget. A budget listed twice must have two tokens.
 * With no budgets, it succeeds.
 */
export function withdrawAll(...budgets: RetryBudget[]): boolean {
  const needed = new Map<RetryBudget, number>();
  for (const budget of budgets) needed.set(budget, (needed.get(budget) ?? 0) + 1);
  for (const [budget, count] of needed) if (!budget.canWithdraw(count)) return false;
  for (const budget of budgets) budget.tryWithdraw();
  return true;
}
