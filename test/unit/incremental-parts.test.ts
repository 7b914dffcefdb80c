import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { framedAnswer } from '../../src/answers/framed-answer.js';
import { CompleteResult } from '../../src/incremental/complete-result.js';
import { deliveredInParts } from '../../src/incremental/incremental-delivery.js';
import { placeErrors, type IncrementalPayload } from '../../src/incremental/incremental-payload.js';

const DEFERRED = parse(`{ companies { nodes { name ... @defer { domain } } } }`);
const STREAMED = parse(`{ companies { nodes @stream(initialCount: 1) { name } } }`);
const PLAIN = parse(`{ companies { nodes { name } } }`);

describe('deliveredInParts', () => {
  it.each([
    ['multipart/mixed;deferSpec=20220824,application/json', true],
    [
      'application/graphql-response+json, application/json, text/event-stream, multipart/mixed',
      true,
    ],
    ['text/event-stream', true],
    ['Multipart/Mixed', true],
    ['application/json', false],
    ['*/*', false],
    [null, false],
  ])('Accept %s: %s for a document with @defer or @stream', (accept, inParts) => {
    expect(deliveredInParts(DEFERRED, accept)).toBe(inParts);
    expect(deliveredInParts(STREAMED, accept)).toBe(inParts);
    expect(deliveredInParts(PLAIN, accept)).toBe(false);
  });
});

const error = (path: (string | number)[]) => new GraphQLError(`at ${path.join('.')}`, { path });

describe('CompleteResult', () => {
  it('merges each deferred fragment at its path and puts each stream item at its index', () => {
    const complete = new CompleteResult();
    const first = {
      data: { list: { nodes: [{ name: 'a', company: { name: 'A' } }] }, other: null },
      hasNext: true,
    };
    complete.add(first);
    complete.add({
      incremental: [
        { items: [{ name: 'b', company: { name: 'B' } }], path: ['list', 'nodes', 1] },
        { data: { company: { domain: 'a.com' } }, path: ['list', 'nodes', 0] },
      ],
      hasNext: true,
    });
    complete.add({
      incremental: [
        { data: { company: { domain: 'b.com' } }, path: ['list', 'nodes', 1] },
        { data: { other: 'root' }, path: [] },
      ],
      hasNext: false,
    });
    expect(complete.hasNext).toBe(false);
    expect(complete.result).toEqual({
      data: {
        list: {
          nodes: [
            { name: 'a', company: { name: 'A', domain: 'a.com' } },
            { name: 'b', company: { name: 'B', domain: 'b.com' } },
          ],
        },
        other: 'root',
      },
    });
    // The first payload, as it was written, is left as it was.
    expect(first.data.list.nodes).toHaveLength(1);
  });

  it('keeps every error, the top ones then the parts', () => {
    const complete = new CompleteResult();
    complete.add({ data: { a: null }, errors: [error(['a'])], hasNext: true });
    complete.add({
      incremental: [{ data: null, path: ['b'], errors: [error(['b', 'c'])] }],
      hasNext: false,
    });
    expect(complete.result.errors!.map((e) => e.path)).toEqual([['a'], ['b', 'c']]);
  });
});

describe('placeErrors', () => {
  const first: IncrementalPayload = { data: { list: { nodes: [] } }, hasNext: true };
  const later: IncrementalPayload = {
    incremental: [
      { data: {}, path: ['list', 'nodes', 0] },
      { data: {}, path: ['list', 'nodes', 1] },
    ],
    hasNext: true,
  };

  it('puts an error in the first payload when it holds its field, else keeps it waiting', () => {
    const held = error(['list']);
    const later = error(['list', 'nodes', 0, 'moves']);
    const { payload, waiting } = placeErrors(first, [held, later]);
    expect(payload.errors).toEqual([held]);
    expect(waiting).toEqual([later]);
  });

  it('puts an error in the part whose path leads to it', () => {
    const deep = error(['list', 'nodes', 1, 'moves']);
    const { payload, waiting } = placeErrors(later, [deep]);
    expect(payload.incremental![0]!.errors).toBeUndefined();
    expect(payload.incremental![1]!.errors).toEqual([deep]);
    expect(waiting).toEqual([]);
  });

  it('the last payload takes whatever still waits', () => {
    const elsewhere = error(['other']);
    const last = { ...later, hasNext: false };
    expect(placeErrors(last, [elsewhere]).payload.incremental![0]!.errors).toEqual([elsewhere]);
    expect(placeErrors({ hasNext: false }, [elsewhere]).payload.errors).toEqual([elsewhere]);
  });
});

describe('framedAnswer', () => {
  const data = Buffer.from('{"a":1}');
  const extensions = { credits: { used: 0 } };
  const text = (type: string) => Buffer.concat(framedAnswer(type, data, extensions)).toString();
  const payload = '{"data":{"a":1},"hasNext":false,"extensions":{"credits":{"used":0}}}';

  it('JSON as it was', () => {
    expect(text('application/json; charset=utf-8')).toBe(
      '{"data":{"a":1},"extensions":{"credits":{"used":0}}}',
    );
  });

  it('one part of a multipart body, as Yoga writes one', () => {
    expect(text('multipart/mixed; boundary="-"')).toBe(
      `\r\n---\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${payload.length}\r\n\r\n${payload}\r\n-----\r\n`,
    );
  });

  it('one event of an event stream, then its end', () => {
    expect(text('text/event-stream')).toBe(
      `:\n\nevent: next\ndata: ${payload}\n\nevent: complete\ndata:\n\n`,
    );
  });
});
