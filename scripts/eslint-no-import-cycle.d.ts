// Types of the lint rule in eslint-no-import-cycle.js, for the tests that load it.
import type { Rule } from 'eslint';

export declare const noImportCycle: Rule.RuleModule;
