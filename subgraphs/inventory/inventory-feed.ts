// The inventory subgraph's live stock: changes, pushed or moving on their own while watched, stored in the table and published to subscriptions.
import { createEventSource, type Random } from '../kit/index.js';
import { MAX_IN_STOCK, type InventoryRow } from './inventory-data.js';

/** Mean time between two moves of a watched product's stock, in ms, when neither option nor environment says. */
export const DEFAULT_TICK_MS = 1_000;
/** The environment variable that sets `tickMs` at start (`0` turns the moves off). */
export const TICK_ENV_VAR = 'INVENTORY_TICK_MS';
/** One hour: a longer period is the same as off, which `0` says plainly. */
export const MAX_TICK_MS = 3_600_000;
/**
 * The products that move while a subscription without `productId` is open: the catalogue's first page
 * (what `products(first: 5)` shows), so such a subscription always sees events at a bounded, cheap rate.
 */
export const ALL_PRODUCTS_TICKING: readonly string[] = Object.freeze(['1', '2', '3', '4', '5']);
/** Largest move of one tick, in units of stock. */
const MAX_STEP = 10;

/** A change to one product's stock; `warehouse` left out keeps the current one, `null` unassigns it. */
export interface StockChange {
  productId: string;
  inStock: number;
  warehouse?: string | null;
}

export interface InventoryFeedOptions {
  /** Mean ms between two moves of a watched product's stock (each wait is uniform in 0.5..1.5 × tickMs); 0 turns moves off. */
  tickMs: number;
  /** Random source of the waits and steps. Default `Math.random`. */
  random?: Random;
}

export interface InventoryFeed {
  /** Mean ms between moves; 0 when moves are off. */
  readonly tickMs: number;
  /** Ids of the products whose stock moves on its own right now, in id order. */
  readonly ticking: readonly string[];
  /** Subscriptions open now. */
  readonly watchers: number;
  /** Whether the table has a row for `productId`. */
  has(productId: string): boolean;
  /** Stores the change and publishes the new row; answers it and the number of subscriptions it reached. The caller checks the input. */
  change(change: StockChange): { row: InventoryRow; delivered: number };
  /** The rows of `productId` as they change (every product's with `undefined`); keeps the product moving until the consumer returns. */
  watch(productId: string | undefined): AsyncIterableIterator<InventoryRow>;
  /** Ends every subscription and stops every move. */
  close(): void;
}

/**
 * Wraps the inventory table (mutated in place, so the DataLoader source and later queries see each change):
 * 1. `watch` subscribes to the event source with a productId filter and counts, per product, the
 *    subscriptions that keep it moving (a subscription without productId counts for `ALL_PRODUCTS_TICKING`);
 * 2. a product's count going 0 → 1 starts its timer, 1 → 0 (the subscription's `onEnd`) clears it, so
 *    nothing runs while nobody watches;
 * 3. each timer waits a uniform 0.5..1.5 × tickMs, so watched products drift apart instead of moving in
 *    lockstep, then moves the stock by 1..10 units up or down (reflected at 0 and `MAX_IN_STOCK`, so a move always
 *    changes it), stores and publishes the new row, and waits again.
 */
export function createInventoryFeed(table: Map<string, InventoryRow>, options: InventoryFeedOptions): InventoryFeed {
  const { tickMs } = options;
  const random = options.random ?? Math.random;
  const events = createEventSource<InventoryRow>();
  const watching = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  const allTicking = ALL_PRODUCTS_TICKING.filter((id) => table.has(id));

  function change(stock: StockChange): { row: InventoryRow; delivered: number } {
    const current = table.get(stock.productId);
    if (current === undefined) throw new RangeError(`no product has id "${stock.productId}"`);
    const warehouse = stock.warehouse === undefined ? current.warehouse : stock.warehouse;
    const row = Object.freeze({ productId: stock.productId, inStock: stock.inStock, warehouse });
    table.set(stock.productId, row);
    return { row, delivered: events.publish(row) };
  }

  function move(productId: string): void {
    const { inStock } = table.get(productId)!;
    const step = (1 + Math.floor(random() * MAX_STEP)) * (random() < 0.5 ? -1 : 1);
    const next = inStock + step >= 0 && inStock + step <= MAX_IN_STOCK ? inStock + step : inStock - step;
    change({ productId, inStock: Math.min(MAX_IN_STOCK, Math.max(0, next)) });
  }

  function schedule(productId: string): void {
    const timer = setTimeout(function moveStock() {
      move(productId);
      // Wait again only if still watched: a consumer may have returned while the change was published.
      if (timers.get(productId) === timer) schedule(productId);
    }, tickMs * (0.5 + random()));
    timers.set(productId, timer);
  }

  function keepMoving(ids: readonly string[], by: 1 | -1): void {
    for (const id of ids) {
      const count = (watching.get(id) ?? 0) + by;
      if (count > 0) watching.set(id, count);
      else watching.delete(id);
      if (tickMs === 0) continue;
      if (count === 1 && by === 1) schedule(id);
      if (count === 0) {
        clearTimeout(timers.get(id));
        timers.delete(id);
      }
    }
  }

  return {
    tickMs,
    get ticking() {
      return [...timers.keys()].sort((a, b) => Number(a) - Number(b));
    },
    get watchers() {
      return events.listeners;
    },
    has: (productId) => table.has(productId),
    change,
    watch: function watchStock(productId) {
      const ids = productId === undefined ? allTicking : [productId];
      keepMoving(ids, 1);
      return events.subscribe({
        accept: productId === undefined ? undefined : (row) => row.productId === productId,
        onEnd: () => keepMoving(ids, -1),
      });
    },
    close: function closeInventoryFeed() {
      events.close();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      watching.clear();
    },
  };
}

/**
 * `tickMs` from the option, else `INVENTORY_TICK_MS`, else 1000. An integer from 0 to `MAX_TICK_MS`;
 * anything else throws a RangeError at creation, naming where the bad value came from.
 */
export function tickMsFrom(option: number | undefined, env: NodeJS.ProcessEnv): number {
  if (option !== undefined) {
    if (isTickMs(option)) return option;
    throw new RangeError(`tickMs must be an integer number of milliseconds from 0 to ${MAX_TICK_MS} (got ${JSON.stringify(option)})`);
  }
  const raw = env[TICK_ENV_VAR]?.trim();
  if (raw === undefined || raw === '') return DEFAULT_TICK_MS;
  // Number('') is 0, hence the emptiness check above.
  const value = Number(raw);
  if (isTickMs(value)) return value;
  throw new RangeError(`${TICK_ENV_VAR} must be an integer number of milliseconds from 0 to ${MAX_TICK_MS} (got ${JSON.stringify(env[TICK_ENV_VAR])})`);
}

function isTickMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TICK_MS;
}
