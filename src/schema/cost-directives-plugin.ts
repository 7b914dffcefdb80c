import SchemaBuilder, {
  BasePlugin,
  type PothosOutputFieldConfig,
  type PothosTypeConfig,
  type SchemaTypes,
} from '@pothos/core';
import { defaultConfig } from '../config.js';
import {
  CONNECTION_RECORD_FIELDS,
  CREDITS_PER_RECORD,
  type CreditCost,
} from '../estimate/credit-cost.js';

/** A directive as the directives plugin keeps it in `extensions.directives`. */
interface Directive {
  name: string;
  args: Record<string, unknown>;
}

const RECORDS_OF_CONNECTION = 'recordsOfConnection';

/**
 * `extensions` of a connection's object type: its {@link CONNECTION_RECORD_FIELDS} hold the
 * records its connection fields read.
 */
export const CONNECTION_TYPE_EXTENSIONS = { [RECORDS_OF_CONNECTION]: true } as const;

/**
 * In credits, a record costs nothing by being in an answer: the field that fetches it does (a
 * connection's records, a lookup, a round's investors loaded). Every object type weighs this, so
 * that a tool's default weight of an object (1) never counts an embedded record.
 */
const OBJECT_WEIGHT = 0;

const costDirective = (weight: number): Directive => ({ name: 'cost', args: { weight } });
const listSizeDirective = (args: Record<string, unknown>): Directive => ({
  name: 'listSize',
  args,
});

/**
 * The cost directives of a field, from the cost it declares for the estimate (`creditCost`), so
 * that a tool computing the GraphQL Cost Directives specification's cost from the schema gets the
 * estimate's credits, and each figure is stated once:
 * - a connection is sized by `first`, else the default page size, and each of its records costs
 *   {@link CREDITS_PER_RECORD} under `edges` and under `nodes`;
 * - a lookup costs its worst case: the largest `assumedCost` of any id, and for a list, the most
 *   ids it takes;
 * - a list of references is `assumedSize` long, each item costing what loading it does;
 * - a subscription's event costs its record, per payload.
 */
function directivesOf(declared: CreditCost | undefined, holdsRecords: boolean): Directive[] {
  if (holdsRecords) return [costDirective(CREDITS_PER_RECORD)];
  switch (declared?.kind) {
    case 'connection':
      return [
        listSizeDirective({
          // The default applies when `first` is absent: the specification's fallback, which it
          // allows only where no slicing argument is required.
          assumedSize: defaultConfig.defaultPageSize,
          slicingArguments: ['first'],
          sizedFields: [...CONNECTION_RECORD_FIELDS],
          requireOneSlicingArgument: false,
        }),
      ];
    case 'lookup': {
      const worst = declared.worstCase;
      if (!worst) return [];
      const directives = [costDirective(worst.assumedCost)];
      if (worst.records !== undefined) {
        directives.push(listSizeDirective({ assumedSize: worst.records }));
      }
      return directives;
    }
    // A subscription's payload: its record's credit, plus its selection's.
    case 'event':
      return [costDirective(CREDITS_PER_RECORD)];
    case 'references':
      return [
        costDirective(declared.load.assumedCost),
        listSizeDirective({ assumedSize: declared.assumedSize }),
      ];
    default:
      return [];
  }
}

function withDirectives<C extends { extensions?: object | null }>(
  config: C,
  directives: readonly Directive[],
): C {
  const extensions = config.extensions as Record<string, unknown> | null | undefined;
  const own = (extensions?.['directives'] as Directive[] | undefined) ?? [];
  return { ...config, extensions: { ...config.extensions, directives: [...own, ...directives] } };
}

/**
 * Writes the GraphQL Cost Directives (`@cost`, `@listSize`) on every object type and every field
 * that spends, from the costs the estimate reads (`directivesOf`), for routers and tools that
 * read the printed schemas. The directives plugin, after it, prints them; each schema defines the
 * directives its way (`COST_DIRECTIVES`, or the subgraph's `@link`).
 */
export class CostDirectivesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onTypeConfig(typeConfig: PothosTypeConfig): PothosTypeConfig {
    if (typeConfig.kind !== 'Object' && typeConfig.kind !== 'Query') return typeConfig;
    return withDirectives(typeConfig, [costDirective(OBJECT_WEIGHT)]);
  }

  override onOutputFieldConfig(
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): PothosOutputFieldConfig<Types> {
    const parent = this.buildCache.getTypeConfig(fieldConfig.parentType);
    const holdsRecords =
      parent.extensions?.[RECORDS_OF_CONNECTION] === true &&
      (CONNECTION_RECORD_FIELDS as readonly string[]).includes(fieldConfig.name);
    const creditCost = fieldConfig.extensions?.['creditCost'] as CreditCost | undefined;
    const directives = directivesOf(creditCost, holdsRecords);
    return directives.length > 0 ? withDirectives(fieldConfig, directives) : fieldConfig;
  }
}

const pluginName = 'costDirectives';

declare global {
  // Pothos plugins register their types in its global namespace: there is no module form.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      costDirectives: CostDirectivesPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(pluginName, CostDirectivesPlugin);

export default pluginName;
