import type { GraphQLField } from 'graphql';
import type { LookupCost } from '../nodes/lookup-cost.js';

/** What the estimate knows of the settings it runs under. */
export interface EstimateSettings {
  /** `first` when a connection gets none. */
  defaultPageSize: number;
  /** The largest `first`; a connection asked for more is refused before it spends. */
  maxPageSize: number;
  /** The key ids and cursors are signed with (a lookup by a forged id spends nothing). */
  secret: string;
}

/** What the service charges for each record a response returns. */
export const CREDITS_PER_RECORD = 1;

/**
 * The fields of a connection's object type that hold its records, `first` items each (the Relay
 * plugin's names); its other fields (`pageInfo`) hold none.
 */
export const CONNECTION_RECORD_FIELDS = ['edges', 'nodes'] as const;

/**
 * What the schema's cost directives state of a lookup (`@cost`, and `@listSize` for a list), for
 * tools that read the schema rather than the arguments: the largest `assumedCost` any record it
 * may return can have (whatever the id's type and hints), and for a list, the most records.
 */
export interface LookupWorstCase {
  readonly assumedCost: number;
  readonly records?: number;
}

/** A record a lookup may return, and what finding it costs. */
export interface LookupTarget {
  /** The object type of the record: an id names its type. */
  typename: string;
  cost: LookupCost;
}

/**
 * How a field spends credits, declared next to its resolver in `extensions.creditCost` and read
 * by the estimate. A field without one spends nothing itself: an embedded record or a value.
 */
export type CreditCost =
  /**
   * A Relay connection over an upstream list: `first` (or the default) records plus, after a
   * cursor inside an upstream page, the records it re-reads up to that position, each
   * {@link CREDITS_PER_RECORD}. Its {@link CONNECTION_RECORD_FIELDS} hold `first` items.
   */
  | { readonly kind: 'connection' }
  /**
   * A lookup by id or key: the records it may return, from its arguments, each with its cost (the
   * estimate counts its `assumedCost`), and its worst case for the schema's directives (absent
   * where no printed schema shows the field: `_entities`, which routers cost themselves).
   */
  | {
      readonly kind: 'lookup';
      targets(args: Record<string, unknown>, settings: EstimateSettings): readonly LookupTarget[];
      readonly worstCase?: LookupWorstCase;
    }
  /**
   * A list of references embedded in a record (a round's investors), whose length the service
   * does not bound: `assumedSize` items are counted (as `@listSize(assumedSize:)` does), and each
   * costs `load` when a field beyond `free` is asked (it loads the record).
   */
  /**
   * A subscription's event: one record per payload, a credit against the subscription's budget,
   * plus what its nested fields cost. The estimate is per payload.
   */
  | { readonly kind: 'event' }
  /**
   * The gateway's own state (an alert, its deliveries): no upstream request, no credit, whatever
   * is selected under it.
   */
  | { readonly kind: 'local' }
  | {
      readonly kind: 'references';
      readonly assumedSize: number;
      readonly free: readonly string[];
      readonly load: LookupCost;
    };

/** `extensions` of a field that declares its cost. */
export const creditCostExtension = (cost: CreditCost) => ({ creditCost: cost });

/** The cost a field declares, if any. */
export function creditCostOf(field: GraphQLField<unknown, unknown>): CreditCost | undefined {
  return field.extensions.creditCost as CreditCost | undefined;
}

/** The cost of a field over the gateway's own state (alerts). */
export const LOCAL_COST = creditCostExtension({ kind: 'local' });

/** The cost of every connection field. */
export const CONNECTION_COST = creditCostExtension({ kind: 'connection' });
