// Unit tests of retry budgets: deposits, withdrawals, caps, and all-or-nothing withdrawal.
import { describe, expect, it } from 'vitest';
import { RetryBudget, withdrawAll } from './retry-budget.js';

function drain(budget: RetryBudget): number {
  let taken = 0;
  while (budget.tryWithdraw()) taken++;
  return taken;
}

describe('RetryBudget', () => {
  it('starts with two tokens, so one early failed call can be retried twice', () => {
    const budget = new RetryBudget();
    expect(budget.tokens).toBe(2);
    expect(drain(budget)).toBe(2);
    expect(budget.tryWithdraw()).toBe(false);
  });

  it('deposits `ratio` per call: ten calls at 10% make exactly one token', () => {
    const budget = new RetryBudget({ initialTokens: 0 });
    for (let i = 0; i < 9; i++) budget.recordCall();
    expect(budget.tryWithdraw()).toBe(false);
    budget.recordCall();
    expect(budget.tokens).toBe(1);
    expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tokens).toBe(0);
  });

  it('allows about `ratio` extra attempts over many calls', () => {
    const budget = new RetryBudget({ ratio: 0.05, initialTokens: 0 });
    let extra = 0;
    for (let i = 0; i < 1000; i++) {
      budget.recordCall();
      if (budget.tryWithdraw()) extra++;
    }
    expect(extra).toBe(50);
  });

  it('saves at most maxTokens', () => {
    const budget = new RetryBudget({ maxTokens: 3, initialTokens: 0 });
    for (let i = 0; i < 1000; i++) budget.recordCall();
    expect(budget.tokens).toBe(3);
    expect(drain(budget)).toBe(3);
  });

  it('caps the default initial tokens at maxTokens, and rejects impossible options', () => {
    expect(new RetryBudget({ maxTokens: 1 }).tokens).toBe(1);
    expect(new RetryBudget({ initialTokens: 7 }).tokens).toBe(7);
    expect(() => new RetryBudget({ ratio: 2 })).toThrow(RangeError);
    expect(() => new RetryBudget({ maxTokens: 0 })).toThrow(RangeError);
    expect(() => new RetryBudget({ maxTokens: 5, initialTokens: 6 })).toThrow(RangeError);
  });
});

describe('withdrawAll', () => {
  it('takes one token from every budget', () => {
    const extra = new RetryBudget({ initialTokens: 2 });
    const hedges = new RetryBudget({ initialTokens: 1 });
    expect(withdrawAll(extra, hedges)).toBe(true);
    expect([extra.tokens, hedges.tokens]).toEqual([1, 0]);
  });

  it('takes nothing when any budget is short', () => {
    const extra = new RetryBudget({ initialTokens: 2 });
    const hedges = new RetryBudget({ initialTokens: 0.9 });
    expect(withdrawAll(extra, hedges)).toBe(false);
    expect([extra.tokens, hedges.tokens]).toEqual([2, 0.9]);
    expect(withdrawAll(hedges, extra)).toBe(false);
    expect(extra.tokens).toBe(2);
  });

  it('needs two tokens from a budget listed twice, and succeeds with no budgets', () => {
    const budget = new RetryBudget({ initialTokens: 1 });
    expect(withdrawAll(budget, budget)).toBe(false);
    expect(budget.tokens).toBe(1);
    expect(withdrawAll()).toBe(true);
  });
});
