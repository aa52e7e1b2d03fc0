import { parseArgs } from 'node:util';
import { mintToken } from './auth/token.js';
import { ConfigError, loadConfig } from './config.js';

/**
 * `npm run -s token -- --user APP_USER [--roles admin] [--expires 8h]` prints a bearer token
 * for the server configured by the same environment (AUTH_JWT_SECRET, AUTH_ISSUER,
 * AUTH_AUDIENCE, AUTH_USER_CLAIM, AUTH_ROLES_CLAIM), and nothing else, so that
 * `TOKEN=$(npm run -s token -- --user APP_USER)` works.
 */
try {
  const { values } = parseArgs({
    options: {
      user: { type: 'string' },
      roles: { type: 'string', default: '' },
      expires: { type: 'string', default: '8h' },
    },
  });
  const roles = values.roles
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  const token = await mintToken(loadConfig(process.env).auth, {
    user: values.user,
    roles,
    expiresIn: values.expires,
  });
  process.stdout.write(`${token}\n`);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `agent-graph token: ${message}\n${error instanceof ConfigError ? '' : 'usage: npm run -s token -- --user APP_USER [--roles admin] [--expires 8h]\n'}`,
  );
  process.exit(1);
}
