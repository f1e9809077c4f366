// What an answer lacks: the sections that failed or came from stale copies, read the same way for one answer and for each payload of a stream.
import type { GraphQLError } from 'graphql';
import type { StaleSection } from './request-state.js';

export interface MissingSection {
  /** Response path of the missing field (absent for a stale copy, which stands in for a whole subgraph call). */
  path?: readonly (string | number)[];
  subgraph?: string;
  code: string;
  /** Age of the copy served instead, in ms (code STALE). */
  ageMs?: number;
}

export interface Completeness {
  complete: boolean;
  missing: MissingSection[];
}

/** Each located field error as a missing section (its path, subgraph and code). */
export function missingOf(errors: readonly GraphQLError[] | undefined): MissingSection[] {
  const missing: MissingSection[] = [];
  for (const error of errors ?? []) {
    if (!error.path) continue;
    const extensions = error.extensions ?? {};
    missing.push({
      path: error.path,
      subgraph: typeof extensions.subgraph === 'string' ? extensions.subgraph : undefined,
      code: typeof extensions.code === 'string' ? extensions.code : 'INTERNAL_SERVER_ERROR',
    });
  }
  return missing;
}

/** The stale copies served, as missing sections (code STALE, with their age). */
export function staleOf(stale: readonly StaleSection[] | undefined): MissingSection[] {
  return (stale ?? []).map((section) => ({ subgraph: section.subgraph, code: 'STALE', ageMs: section.ageMs }));
}
