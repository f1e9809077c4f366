// Every section of the configuration file, in its order: the one place a section is registered (docs/decisions/034-configuration-sections-by-descriptor.md).
import { cacheRulesSection } from './cache-rules.js';
import { corsSection } from './cors.js';
import { permissionsSection } from './permissions.js';
import { policiesSection } from './policies.js';
import { subgraphsSection } from './subgraphs.js';
import { trustedDocumentsSection } from './trusted-documents.js';

/**
 * The order the file lists the sections in, the diff shows them in and apply writes them in (all in
 * one transaction, so the order decides only which store's refusal stops an apply first).
 */
export const SECTIONS = [subgraphsSection, policiesSection, permissionsSection, cacheRulesSection, trustedDocumentsSection, corsSection] as const;
