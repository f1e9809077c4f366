// Building blocks of the sections' schemas: values checked by their store's rule, maps whose keys a store checks, and the normalised form (nulls dropped, entries sorted).
import { z } from 'zod';
import { compareText } from './section.js';

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value checked by a store's rule (`problem` returns its message), so the file is held to what the single-item command holds it to. */
export function checked<T>(problem: (value: unknown) => string | undefined) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const message = problem(value);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message });
    })
    .transform((value) => value as T);
}

/** What is wrong with one key of a map (or, `path` given, with a field of its entry). */
export type KeyProblem = { path?: (string | number)[]; message: string } | undefined;

/**
 * A map whose keys a store's rule checks. The check runs even when some values are wrong
 * (`when`), so a bad key and a bad value in one file are both reported.
 */
export function keyedBy<T extends z.ZodType>(value: T, keyProblem: (key: string, entry: unknown) => KeyProblem) {
  return z.record(z.string(), value).superRefine(
    (record, ctx) => {
      for (const [key, entry] of Object.entries(record as Record<string, unknown>)) {
        const problem = keyProblem(key, entry);
        if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: [key, ...(problem.path ?? [])] });
      }
    },
    { when: (payload) => isPlainObject(payload.value) },
  );
}

/** A key rule that speaks of the key only (`operationNameProblem`), as keyedBy takes it. */
export const keyRule =
  (problem: (key: string) => string | undefined) =>
  (key: string): KeyProblem => {
    const message = problem(key);
    return message ? { message } : undefined;
  };

/** Drops the keys whose value is null or undefined: in the file, a key set to null is a key left out. */
export function present<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

export const mapValues = <T, U>(record: Record<string, T>, fn: (value: T) => U): Record<string, U> => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));

/** Entries as a record in code-unit order of their keys (the order export writes). */
export const sortedEntries = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries([...entries].sort(([a], [b]) => compareText(a, b)));
