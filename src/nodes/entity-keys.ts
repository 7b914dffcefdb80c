import type { UpstreamSession } from '../upstream/upstream-session.js';
import { COMPANY_BY_DOMAIN_COST, companyNode, findCompanyByDomain } from './company-node.js';
import { acquisitionNode } from './acquisition-node.js';
import { execMoveNode } from './exec-move-node.js';
import { fundingEventNode } from './funding-event-node.js';
import { invalidArgument } from '../errors.js';
import { inspectGlobalId, refusedId, type NodeTypeName } from './global-id.js';
import { findInvestorByDomain, INVESTOR_BY_DOMAIN_COST, investorNode } from './investor-node.js';
import type { LookupCost } from './lookup-cost.js';
import type { NodeId, NodeType } from './node-type.js';
import { personNode } from './person-node.js';
import type { RecordStore } from './record-store.js';

/** A federation representation: `__typename` and the fields of one of the type's keys. */
export type Representation = Readonly<Record<string, unknown>>;

/** How one representation is found, and what finding it costs. */
export interface EntityLookup {
  readonly cost: LookupCost;
  find(records: RecordStore, session: UpstreamSession): Promise<unknown> | unknown;
}

/** The `@key` field sets of one node type, and how a representation of any of them is found. */
export interface EntityKeys {
  /** The field sets, `id` (the global id, which carries the lookup's hints) first. */
  readonly keys: readonly string[];
  /**
   * The lookup of a representation; null when its `id` is one of another type (it names no record
   * of this one). Throws INVALID_INPUT, naming `representations`, when it carries no key's fields
   * (as strings), and for an id this gateway did not issue, as `node(id:)` does.
   */
  lookupOf(representation: Representation, secret: string): EntityLookup | null;
}

const ARGUMENT = 'representations';

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `representation[field].uuid`, for keys through an embedded record (`company { uuid }`). */
function uuidOf(representation: Representation, field: string): string | null {
  const embedded = representation[field];
  return typeof embedded === 'object' && embedded !== null
    ? text((embedded as Record<string, unknown>)['uuid'])
    : null;
}

function byNode<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
  id: NodeId<H>,
): EntityLookup {
  const loadable = node as unknown as NodeType<T, H>;
  return { cost: node.findCost(id), find: (records) => records.load(loadable, id) };
}

/**
 * The lookup of a representation by `id`, whatever its other keys: the global id carries the
 * hints every node type's `find` needs, so it is the key other subgraphs should store.
 */
function byGlobalId(
  node: NodeType<{ id: string }, string, { id: string }>,
  value: string,
  secret: string,
): EntityLookup | null {
  const reading = inspectGlobalId(value, secret);
  if (!reading.ok) throw refusedId(ARGUMENT, value, reading.reason);
  if (reading.typename !== node.typename) return null;
  return byNode(node, node.parseLocalId(reading.localId));
}

/**
 * A node type's keys: `id`, then `others`, read by `lookup` when the representation has no id
 * (null when it has none of their fields either).
 */
function entityKeys<T extends { id: string }, H extends string, R extends { id: string }>(
  node: NodeType<T, H, R>,
  others: readonly string[],
  lookup: (representation: Representation) => EntityLookup | null,
): EntityKeys {
  const anyNode = node as unknown as NodeType<{ id: string }, string, { id: string }>;
  const keys = ['id', ...others];
  return {
    keys,
    lookupOf(representation, secret) {
      const id = text(representation['id']);
      if (id) return byGlobalId(anyNode, id, secret);
      const found = lookup(representation);
      if (found) return found;
      throw invalidArgument(
        ARGUMENT,
        `an entity ${node.typename} needs the fields of one of its keys (${keys.map((k) => `"${k}"`).join(', ')}), as strings`,
      );
    },
  };
}

/**
 * Every node type's federation keys, declared once: `@key` directives of the subgraph
 * (`src/schema/entities.ts`), `_entities`' resolver and its credit estimate come from here.
 * The service has no fetch-by-id, so a bare `uuid` is a key only where it finds the record on
 * its own (a company, a person); an investor is searched by name, and an event within its
 * company's or person's list, so their keys carry those too.
 */
export const entityKeysByType: Record<NodeTypeName, EntityKeys> = {
  Company: entityKeys(companyNode, ['uuid', 'domain'], (r) => {
    const uuid = text(r['uuid']);
    if (uuid) return byNode(companyNode, { uuid });
    const domain = text(r['domain']);
    if (!domain) return null;
    return {
      cost: COMPANY_BY_DOMAIN_COST,
      find: (_records, session) => findCompanyByDomain(session, domain),
    };
  }),
  Investor: entityKeys(investorNode, ['uuid name', 'domain'], (r) => {
    const uuid = text(r['uuid']);
    const name = text(r['name']);
    if (uuid && name) return byNode(investorNode, { uuid, name });
    const domain = text(r['domain']);
    if (!domain) return null;
    return {
      cost: INVESTOR_BY_DOMAIN_COST,
      find: (_records, session) => findInvestorByDomain(session, domain),
    };
  }),
  Person: entityKeys(personNode, ['uuid'], (r) => {
    const uuid = text(r['uuid']);
    return uuid ? byNode(personNode, { uuid }) : null;
  }),
  FundingEvent: entityKeys(fundingEventNode, ['uuid company { uuid }'], (r) => {
    const uuid = text(r['uuid']);
    const companyId = uuidOf(r, 'company');
    return uuid && companyId ? byNode(fundingEventNode, { uuid, companyId }) : null;
  }),
  ExecMove: entityKeys(execMoveNode, ['uuid person { uuid }'], (r) => {
    const uuid = text(r['uuid']);
    const personId = uuidOf(r, 'person');
    return uuid && personId ? byNode(execMoveNode, { uuid, personId }) : null;
  }),
  Acquisition: entityKeys(
    acquisitionNode,
    ['uuid acquirer { uuid }', 'uuid target { uuid }'],
    (r) => {
      const uuid = text(r['uuid']);
      // The service's `companyId` filter matches the acquirer or the target.
      const companyId = uuidOf(r, 'acquirer') ?? uuidOf(r, 'target');
      return uuid && companyId ? byNode(acquisitionNode, { uuid, companyId }) : null;
    },
  ),
};
