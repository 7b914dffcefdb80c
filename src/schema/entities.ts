import type { Context } from '../context.js';
import { entityKeysByType, type Representation } from '../nodes/entity-keys.js';
import type { NodeTypeName } from '../nodes/global-id.js';
import { builder } from './builder.js';
import {
  AcquisitionRef,
  CompanyRef,
  ExecMoveRef,
  FundingEventRef,
  InvestorRefType,
  PersonRef,
} from './refs.js';

/**
 * A representation's record, found as `node(id:)` finds one: through the operation's records.
 * Async, so that a refused representation fails its own item (`_entities.N`), not the list.
 */
function resolveReference(typename: NodeTypeName) {
  const keys = entityKeysByType[typename];
  return async (representation: Representation, context: Context) =>
    (await keys
      .lookupOf(representation, context.config.cursorSecret)
      ?.find(context.records, context.upstream)) ?? null;
}

/** Each node type as a federation entity: its `@key`s (src/nodes/entity-keys.ts) and lookup. */
function asEntity(ref: Parameters<typeof builder.asEntity>[0], typename: NodeTypeName) {
  builder.asEntity(ref, {
    // The field sets are plain strings declared once in entity-keys.ts; Pothos's template type
    // cannot check a string it does not see as a literal.
    key: entityKeysByType[typename].keys.map((fields) =>
      builder.selection<Representation>(fields as never),
    ),
    resolveReference: resolveReference(typename) as never,
  });
}

asEntity(CompanyRef, 'Company');
asEntity(InvestorRefType, 'Investor');
asEntity(PersonRef, 'Person');
asEntity(FundingEventRef, 'FundingEvent');
asEntity(ExecMoveRef, 'ExecMove');
asEntity(AcquisitionRef, 'Acquisition');
