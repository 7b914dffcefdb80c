import { SourceRef } from './refs.js';

SourceRef.implement({
  description: 'A page the service extracted an event from.',
  fields: (t) => ({
    url: t.exposeString('url', { nullable: true }),
    extractedAt: t.expose('extractedAt', { type: 'DateTime', nullable: true }),
  }),
});
