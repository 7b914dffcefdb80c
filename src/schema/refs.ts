import type { CountryRecord, SourceRecord } from '../upstream/types.js';
import { builder } from './builder.js';

/**
 * Refs of the object types that are not node types, declared apart from their implementations so
 * that type files can point at them. A node type's ref comes from its declaration: `nodeRef`.
 */
export const CountryRef = builder.objectRef<CountryRecord>('Country');
export const SourceRef = builder.objectRef<SourceRecord>('Source');
