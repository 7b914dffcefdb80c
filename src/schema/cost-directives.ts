import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLString,
} from 'graphql';

/**
 * `@cost` and `@listSize` as the GraphQL Cost Directives specification defines them
 * (https://ibm.github.io/graphql-specs/cost-spec.html, sections 7 and 8), word for word, for
 * `schema.graphql`: `weight` is a `String!` there, a serialized float. The subgraph imports them from Apollo
 * Federation instead (`@link`, where `weight` is an `Int!`), so it defines neither.
 */
export const COST_DIRECTIVES: readonly GraphQLDirective[] = [
  new GraphQLDirective({
    name: 'cost',
    locations: [
      DirectiveLocation.ARGUMENT_DEFINITION,
      DirectiveLocation.ENUM,
      DirectiveLocation.FIELD_DEFINITION,
      DirectiveLocation.INPUT_FIELD_DEFINITION,
      DirectiveLocation.OBJECT,
      DirectiveLocation.SCALAR,
    ],
    args: { weight: { type: new GraphQLNonNull(GraphQLString) } },
  }),
  new GraphQLDirective({
    name: 'listSize',
    locations: [DirectiveLocation.FIELD_DEFINITION],
    args: {
      assumedSize: { type: GraphQLInt },
      slicingArguments: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      sizedFields: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      requireOneSlicingArgument: { type: GraphQLBoolean, defaultValue: true },
    },
  }),
];
