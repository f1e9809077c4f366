// The two incremental delivery formats: the same payloads written as Apollo's deferSpec=20220824 or graphql-js 17's incrementalSpec=v0.2.
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Completeness } from '../../request/completeness.js';
import type { IncrementalFormat } from '../../request/request-state.js';
import type { PartPlace } from './deferred-parts.js';

/** One place a deferred part applies, announced in the payload that found it and delivered later. */
export interface Delivery extends PartPlace {
  /** Its id in the stream (`pending[].id` in v0.2): the order it was found in. */
  readonly id: string;
}

/** A delivery's answer: the part's fields at its place, or `data: null` when a non-null field of it failed. */
export interface Delivered {
  readonly delivery: Delivery;
  readonly result: ExecutionResult;
}

/** The first payload: the operation without its deferred parts. */
export interface InitialPayload {
  readonly result: ExecutionResult;
  /** The deliveries its answer announces (their parents answered). */
  readonly found: readonly Delivery[];
  readonly completeness: Completeness;
  /** False when it announces none: no deferred part applies (its parent is null, its list empty, its conditions false), and the stream ends. */
  readonly hasNext: boolean;
}

/** A later payload: the deliveries whose fetches were done, those their answers announce, and whether more follow. */
export interface LaterPayload {
  readonly delivered: readonly Delivered[];
  readonly found: readonly Delivery[];
  /** Errors no field stands for, reported since the payload before. */
  readonly unplaced: readonly GraphQLError[];
  readonly hasNext: boolean;
  readonly completeness: Completeness;
}

/** How one incremental format shapes the initial and the later payloads. */
export interface PayloadShapes {
  initial(payload: InitialPayload): ExecutionResult;
  later(payload: LaterPayload): ExecutionResult;
}

/**
 * Apollo's format (`multipart/mixed; deferSpec=20220824`, what Apollo Client, Relay and GraphiQL
 * read): the initial payload is an ordinary result with `hasNext`; each later one has
 * `incremental: [{ data, path, label?, errors? }]`, a part's data at its path (a part whose non-null
 * field failed: `data: null` with its errors). Deliveries are not announced.
 */
const DEFER_20220824: PayloadShapes = {
  initial({ result, completeness, hasNext }) {
    return { ...result, hasNext, extensions: { ...result.extensions, completeness } } as ExecutionResult;
  },
  later({ delivered, unplaced, hasNext, completeness }) {
    const incremental = delivered.map(({ delivery, result }, index) => {
      const errors = index === 0 && unplaced.length > 0 ? [...(result.errors ?? []), ...unplaced] : result.errors;
      return { data: result.data ?? null, path: delivery.path, ...(delivery.part.label !== undefined ? { label: delivery.part.label } : {}), ...(errors?.length ? { errors } : {}) };
    });
    return { incremental, hasNext, extensions: { completeness } } as ExecutionResult;
  },
};

/**
 * graphql-js 17's format (`incrementalSpec=v0.2`): each payload announces the deliveries its data
 * makes possible (`pending: [{ id, path, label? }]`); a later payload gives each one's data
 * (`incremental: [{ id, data, errors? }]`) and closes it (`completed: [{ id }]`). A part whose
 * non-null field failed has no data: it is closed with its errors (`completed: [{ id, errors }]`).
 */
const INCREMENTAL_V02: PayloadShapes = {
  initial({ result, found, completeness, hasNext }) {
    return { ...result, ...(found.length > 0 ? { pending: found.map(pendingOf) } : {}), hasNext, extensions: { ...result.extensions, completeness } } as ExecutionResult;
  },
  later({ delivered, found, unplaced, hasNext, completeness }) {
    const incremental: unknown[] = [];
    const completed: unknown[] = [];
    delivered.forEach(({ delivery, result }, index) => {
      const errors = index === 0 && unplaced.length > 0 ? [...(result.errors ?? []), ...unplaced] : result.errors;
      if (result.data === null || result.data === undefined) {
        completed.push({ id: delivery.id, ...(errors?.length ? { errors } : {}) });
        return;
      }
      incremental.push({ id: delivery.id, data: result.data, ...(errors?.length ? { errors } : {}) });
      completed.push({ id: delivery.id });
    });
    return {
      ...(found.length > 0 ? { pending: found.map(pendingOf) } : {}),
      ...(incremental.length > 0 ? { incremental } : {}),
      completed,
      hasNext,
      extensions: { completeness },
    } as ExecutionResult;
  },
};

function pendingOf(delivery: Delivery): Record<string, unknown> {
  return { id: delivery.id, path: delivery.path, ...(delivery.part.label !== undefined ? { label: delivery.part.label } : {}) };
}

export const INCREMENTAL_FORMATS: Readonly<Record<IncrementalFormat, PayloadShapes>> = {
  'defer-20220824': DEFER_20220824,
  'incremental-v0.2': INCREMENTAL_V02,
};
