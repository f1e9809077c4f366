// Shrinks a query that shows a difference to a smallest one that still shows it, one removal at a time.
import { parse, print, validate, visit, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionNode } from 'graphql';

export interface Candidate {
  query: string;
  variables: Record<string, unknown>;
}

/** Drops the fragments nobody spreads any more and the variables nobody reads (until none is left to drop). */
function tidy(document: DocumentNode, variables: Record<string, unknown>): Candidate {
  let current = document;
  for (;;) {
    const spread = new Set<string>();
    const used = new Set<string>();
    visit(current, {
      FragmentSpread: (node) => void spread.add(node.name.value),
      VariableDefinition: () => false,
      Variable: (node) => void used.add(node.name.value),
    });
    const next = visit(current, {
      FragmentDefinition: (node) => (spread.has(node.name.value) ? undefined : null),
      VariableDefinition: (node) => (used.has(node.variable.name.value) ? undefined : null),
    });
    if (print(next) === print(current)) break;
    current = next;
  }
  const kept = new Set<string>();
  visit(current, { VariableDefinition: (node) => void kept.add(node.variable.name.value) });
  return { query: print(current), variables: Object.fromEntries(Object.entries(variables).filter(([k]) => kept.has(k))) };
}

/**
 * Every document with one thing less: a selection (never the last of its set), an inline fragment replaced by its
 * selections, a named fragment spread replaced by its body, a directive, an argument, an alias. Invalid ones are
 * filtered out by the caller. A first pass counts the possible steps, then step `target` is taken in each document.
 */
function* smaller(document: DocumentNode): Generator<DocumentNode> {
  const definitions = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) definitions.set(d.name.value, d);
  const step = (target: number) => {
    let index = 0;
    const hit = () => index++ === target;
    const result = visit(document, {
      SelectionSet: {
        enter(node) {
          const selections: SelectionNode[] = [];
          for (const selection of node.selections) {
            if (node.selections.length > 1 && hit()) continue;
            if (selection.kind === Kind.INLINE_FRAGMENT && hit()) selections.push(...selection.selectionSet.selections);
            else if (selection.kind === Kind.FRAGMENT_SPREAD && hit()) {
              const definition = definitions.get(selection.name.value)!;
              selections.push({ kind: Kind.INLINE_FRAGMENT, typeCondition: definition.typeCondition, directives: selection.directives, selectionSet: definition.selectionSet });
            } else selections.push(selection);
          }
          return selections.length === node.selections.length && selections.every((s, i) => s === node.selections[i]) ? undefined : { ...node, selections };
        },
      },
      Directive: () => (hit() ? null : undefined),
      Field: {
        enter(node) {
          let changed = node;
          if (node.alias && hit()) changed = { ...changed, alias: undefined };
          const args = node.arguments?.filter(() => !hit());
          if (args && args.length !== (node.arguments?.length ?? 0)) changed = { ...changed, arguments: args };
          return changed === node ? undefined : changed;
        },
      },
    });
    return { result, steps: index };
  };
  const { steps } = step(-1);
  for (let target = 0; target < steps; target++) yield step(target).result;
}

/**
 * Greedy shrinking: try each one-step-smaller valid document in turn and keep the first that still shows the difference;
 * stop when no single removal does (or after `maxTries` checks). The result is locally minimal, which is what a reader needs.
 */
export async function shrinkQuery(schema: GraphQLSchema, start: Candidate, stillDiffers: (candidate: Candidate) => Promise<boolean>, maxTries = 400): Promise<Candidate> {
  let best = tidy(parse(start.query), start.variables);
  let tries = 0;
  for (let progress = true; progress && tries < maxTries; ) {
    progress = false;
    for (const document of smaller(parse(best.query))) {
      if (document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.selectionSet.selections.length === 0)) continue;
      const candidate = tidy(document, best.variables);
      if (candidate.query === best.query || validate(schema, parse(candidate.query)).length) continue;
      if (++tries > maxTries) break;
      if (await stillDiffers(candidate)) {
        best = candidate;
        progress = true;
        break;
      }
    }
  }
  return best;
}
