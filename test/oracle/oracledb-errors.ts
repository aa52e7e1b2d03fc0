import { createRequire } from 'node:module';

/**
 * Errors built by node-oracledb's own code, the way its Thin driver raises them: NJS- errors
 * through `getErr`, database errors as the protocol layer does (`_raiseException`: an Error
 * with the server's message, `errorNum` and `offset`, then `transformErr`, which sets `code`,
 * adds the help link and turns connection-ending ORA- codes into NJS-500).
 */
interface OracledbErrors {
  getErr(errorNum: number, ...args: unknown[]): Error;
  transformErr(error: Error): Error;
  ERR_CONN_REQUEST_TIMEOUT: number;
}

const errors = createRequire(import.meta.url)('oracledb/lib/errors.js') as OracledbErrors;

export function njsError(errorNum: number, ...args: unknown[]): Error {
  return errors.getErr(errorNum, ...args);
}

export function databaseError(message: string, offset = 0): Error {
  const error = Object.assign(new Error(message), {
    errorNum: Number(/^ORA-(\d+)/.exec(message)?.[1]),
    offset,
    isRecoverable: false,
  });
  return errors.transformErr(error);
}
