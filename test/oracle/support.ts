import { createServer, type Server, type Socket } from 'node:net';
import { loadConfig, type OracleDatabaseConfig } from '../../src/config.js';

/** A loopback port with nothing listening: connection attempts are refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A loopback listener that accepts connections and never answers, like a hung database. */
export async function silentListener(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function oracleTestConfig(env: Record<string, string | undefined>): OracleDatabaseConfig {
  const config = loadConfig({ ORACLE_USER: 'agentgraph', ORACLE_PASSWORD: 'secret', ...env });
  if (config.database.kind !== 'oracle') throw new Error('expected an Oracle configuration');
  return config.database;
}
