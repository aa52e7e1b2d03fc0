import { parseArgs } from 'node:util';
import { mintToken } from './auth/token.js';
import { ConfigError, loadConfig } from './config.js';

/**
 * `npm run -s token -- --user APP_USER [--roles admin] [--expires 8h]` prints a bearer token
 * for the server configured by the same environment (AUTH_JWT_SECRET, AUTH_ISSUER,
 * AUTH_AUDIENCE, AUTH_USER_CLAIM, AUTH_ROLES_CLAIM), and nothing else, so that
 * `TOKEN=$(npm run -s token -- --user APP_USER)` works.
 */
const USAGE = 'usage: npm run -s token -- --user APP_USER [--roles admin] [--expires 8h]';
const HELP = `${USAGE}

Prints a bearer token for this server, signed with AUTH_JWT_SECRET (development only).
  --user     the Oracle user (db_user) the caller acts as; optional with --roles admin
  --roles    comma-separated roles; admin sees every owner
  --expires  lifetime: a number and s, m, h or d, at most 30d (default 8h)
`;

try {
  const { values } = parseArgs({
    options: {
      user: { type: 'string' },
      roles: { type: 'string', default: '' },
      expires: { type: 'string', default: '8h' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
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
    `agent-graph token: ${message}\n${error instanceof ConfigError ? '' : `${USAGE}\n`}`,
  );
  process.exit(1);
}
