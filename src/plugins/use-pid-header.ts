import type { Plugin } from 'graphql-yoga';

/** Adds `X-Gateway-Pid` to every response: which process of a cluster answered (tests only). */
export function usePidHeader(): Plugin {
  return {
    onResponse({ response }) {
      response.headers.set('x-gateway-pid', String(process.pid));
    },
  };
}
