// What a section of the configuration file is: one descriptor giving its schema, how export reads it, how the diff names and compares its items, and how apply writes them.
import type { z } from 'zod';
import type { Queryable } from '../database.js';

export type ChangeAction = 'add' | 'change' | 'remove';

/** One field of an item: `undefined` is "not set" (absent from the file, null in the table). */
export interface FieldChange {
  /** e.g. `costLimit`, `url`, `route.breaker.failureRatio`. */
  field: string;
  from?: unknown;
  to?: unknown;
}

/** One change to one item of a section, as the diff finds it and apply writes it. */
export interface SectionChange {
  /** The section's name (its descriptor's `name`, its key in the file). */
  section: string;
  /** What names the item in its section (its descriptor's `items` gives it), e.g. `[name]`, `[coordinate, principal]`, `[id]`. */
  ref: readonly string[];
  action: ChangeAction;
  /** For `add` and `remove`, every field the item has; for `change`, the fields that differ. */
  fields: FieldChange[];
}

/** One item as a section hands it to the diff: the ref that names it, and its fields (nested objects are compared leaf by leaf). */
export interface SectionItem {
  ref: readonly string[];
  fields: Record<string, unknown>;
}

/** One item as the diff compares it: its fields flattened to leaves by dotted path, "not set" left out. */
export interface ComparedItem {
  ref: readonly string[];
  fields: ReadonlyMap<string, unknown>;
}

/** A section's items by diff key. */
export type ItemsByKey = ReadonlyMap<string, ComparedItem>;

/** The diff key of an item: its ref joined by a space, which no name, coordinate, principal or id holds. */
export const itemKey = (ref: readonly string[]): string => ref.join(' ');

/**
 * One section of the configuration file. `Value` is the section as the document holds it: what the
 * schema outputs, what export returns, what apply receives as the file's wish. Each item is
 * described whole (a field the file leaves out is cleared), and the diff, the change lines, the
 * refusals and the one-transaction apply are the generic machinery's (config-diff.ts, config-store.ts).
 * `Name` is the literal key, so the document's type (config-document.ts) is derived from the list.
 */
export interface ConfigSectionDescriptor<Value = unknown, Name extends string = string> {
  /** The section's key in the file (`cacheRules`); sections are written, diffed and applied in the order of SECTIONS. */
  readonly name: Name;
  /** What one item is called in the diff (`cache rule`). */
  readonly noun: string;
  /**
   * The section as the file holds it (zod): strict objects, every value through the rule of the store
   * that owns it (the same words as the single-item command), then normalised to the one form export
   * writes (nulls dropped, lists sorted), so a file and the registry compare equal when they say the same.
   */
  readonly schema: z.ZodType<Value>;
  /** Set when apply never removes the section's items, even with `--prune`: why, as the diff says it (`subgraphs are removed by ...`). */
  readonly neverPruned?: string;
  /** The live section from the registry, in the normalised form (code-unit order; times left out, so two exports are the same file). */
  export(db: Queryable): Promise<Value>;
  /** The section's items: each with its ref (unique within the section) and its fields. */
  items(value: Value): SectionItem[];
  /** How the diff names one item. Default: the noun and the ref (`policy ProductPage`). */
  describe?(ref: readonly string[]): string;
  /** What apply cannot do by itself (the diff refuses the whole file, nothing written), one message each. Default: none. */
  problems?(changes: readonly SectionChange[], current: ItemsByKey, desired: ItemsByKey): string[];
  /** The section's change lines. Default: added and removed items on one line each, changed ones field by field. */
  changeLines?(changes: readonly SectionChange[]): string[];
  /** What the "left alone" line says of the section's items. Default: each item described. */
  leftAloneSummary?(refs: readonly (readonly string[])[]): string[];
  /**
   * Writes the section's changes (never none) inside apply's transaction, through the store that owns
   * the table (and so through its validation). `desired` is the section as the file holds it.
   */
  apply(tx: Queryable, changes: readonly SectionChange[], desired: Value): Promise<void>;
}

/** A list of sections, in the order the file lists them and apply writes them. */
export type SectionList = readonly ConfigSectionDescriptor[];

/** Code-unit order: the same on every machine and database (collations differ between PostgreSQL installs). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
