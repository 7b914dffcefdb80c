import { CountryRef } from './refs.js';

CountryRef.implement({
  description: 'A country, as the service names company and investor headquarters.',
  fields: (t) => ({
    code: t.exposeString('code', {
      nullable: true,
      description: 'Country code (ISO 3166-1 alpha-2 in the sandbox; the spec names no standard).',
    }),
    name: t.exposeString('name', { nullable: true }),
  }),
});
