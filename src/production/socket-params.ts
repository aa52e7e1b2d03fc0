import type { ExecutionResult } from 'graphql';
import type { GraphQLParams, Plugin, YogaServer } from 'graphql-yoga';

/** What graphql-ws hands yoga for one subscribe message; `params` becomes the resolved ones. */
export interface SocketServerContext extends Record<string, unknown> {
  readonly request: Request;
  params: GraphQLParams;
}

const RESOLVED: ExecutionResult = Object.freeze({});
/** Socket contexts whose params step is under way, with its outcome once known. */
const resolving = new WeakMap<object, GraphQLParams | null>();

/**
 * Yoga runs its onParams hooks (trusted documents, the request parameter checks) in its HTTP
 * pipeline only: graphql-ws calls getEnveloped() directly. yoga's public getResultForParams
 * runs them; this hook ends that run with the resolved params instead of executing, so that
 * the socket goes on through the same getEnveloped() as before (src/transport/websocket.ts).
 */
export function useSocketParams(): Plugin {
  return {
    onParams({ context, setParamsHandler }) {
      if (!resolving.has(context)) return;
      setParamsHandler(({ params }) => {
        resolving.set(context, params);
        return RESOLVED;
      });
    },
  };
}

/**
 * Runs yoga's onParams hooks for a graphql-ws subscribe message and stores the params they
 * settle on in `context.params`; throws what a hook throws (a refused document).
 */
export async function resolveSocketParams(
  yoga: Pick<YogaServer<Record<string, unknown>, never>, 'getResultForParams'>,
  context: SocketServerContext,
): Promise<void> {
  resolving.set(context, null);
  try {
    const result = await yoga.getResultForParams(
      { params: context.params, request: context.request },
      context,
    );
    const params = resolving.get(context);
    // No hook of ours answers by itself in onParams (the response cache looks up in
    // execute); one that did would need graphql-ws to send a result it did not execute.
    if (result !== RESOLVED || !params) {
      throw new Error('a yoga onParams hook answered a graphql-ws operation by itself');
    }
    context.params = params;
  } finally {
    resolving.delete(context);
  }
}
