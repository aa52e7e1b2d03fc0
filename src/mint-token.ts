import { mintToken } from './auth/token.js';
import { parseCommand, usageOf } from './command-line.js';
import { ConfigError, loadConfig } from './config.js';

const command = {
  name: 'npm run -s token --',
  synopsis: '--user APP_USER [--roles admin] [--expires 8h]',
  about: `Prints a bearer token for this server, signed with AUTH_JWT_SECRET (development only),
and nothing else: TOKEN=$(npm run -s token -- --user APP_USER) works. Run it with the
server's environment.`,
  options: {
    user: {
      type: 'string',
      placeholder: 'db_user',
      description: 'the Oracle user the caller acts as; optional with --roles admin',
    },
    roles: {
      type: 'string',
      default: '',
      placeholder: 'a,b',
      description: 'comma-separated roles; admin sees every owner',
    },
    expires: {
      type: 'string',
      default: '8h',
      placeholder: 'span',
      description: 'lifetime: a number and s, m, h or d, at most 30d',
    },
  },
  environment: {
    AUTH_JWT_SECRET: 'the HS256 secret the server checks tokens with',
    'AUTH_ISSUER, AUTH_AUDIENCE': 'iss and aud, as the server expects them',
    'AUTH_USER_CLAIM, AUTH_ROLES_CLAIM': 'the claims that carry the user and the roles',
  },
} as const;

const { values } = parseCommand(command);
try {
  const roles = (values.roles ?? '')
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  const token = await mintToken(loadConfig(process.env).auth, {
    user: values.user,
    roles,
    expiresIn: values.expires ?? '8h',
  });
  process.stdout.write(`${token}\n`);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `agent-graph token: ${message}\n${error instanceof ConfigError ? '' : usageOf(command)}`,
  );
  process.exit(1);
}
