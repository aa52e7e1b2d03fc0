import oracledb from 'oracledb';
import { describe, expect, test } from 'vitest';
import { loadConfig, type OracleDatabaseConfig } from '../../src/config.js';
import {
  connectTarget,
  poolAttributes,
  SESSION_SETTINGS,
  SESSION_TIME_ZONE,
  type SessionConnection,
  sessionCallback,
} from '../../src/db/oracle/options.js';

function oracleConfig(env: Record<string, string>): OracleDatabaseConfig {
  const config = loadConfig({ ORACLE_USER: 'AGENTGRAPH', ORACLE_PASSWORD: 'secret', ...env });
  if (config.database.kind !== 'oracle') throw new Error('expected an Oracle configuration');
  return config.database;
}

const ONE_WAY_TLS =
  '(description=(retry_count=20)(retry_delay=3)(address=(protocol=tcps)(port=1521)' +
  '(host=adb.eu-frankfurt-1.oraclecloud.com))(connect_data=(service_name=abc_agents_low.adb.oraclecloud.com))' +
  '(security=(ssl_server_dn_match=yes)))';

describe('poolAttributes', () => {
  test('Easy Connect with defaults: sizes, timeouts and statistics from the config', () => {
    expect(
      poolAttributes(oracleConfig({ ORACLE_CONNECT_STRING: 'db.example.com:1521/FREEPDB1' })),
    ).toEqual({
      user: 'AGENTGRAPH',
      password: 'secret',
      connectString: 'db.example.com:1521/FREEPDB1',
      poolMin: 0,
      poolMax: 8,
      poolIncrement: 1,
      poolTimeout: 0,
      queueTimeout: 5000,
      stmtCacheSize: 60,
      enableStatistics: true,
      sessionCallback,
      connectTimeout: 10,
      transportConnectTimeout: 10,
    });
  });

  test('DB_* settings reach the pool; timeouts become whole seconds, at least one', () => {
    const attributes = poolAttributes(
      oracleConfig({
        ORACLE_CONNECT_STRING: 'db:1521/svc',
        DB_POOL_MIN: '3',
        DB_POOL_MAX: '20',
        DB_QUEUE_TIMEOUT_MS: '750',
        DB_STATEMENT_CACHE_SIZE: '0',
        DB_CONNECT_TIMEOUT_MS: '1500',
      }),
    );
    expect(attributes).toMatchObject({
      poolMin: 0, // DB_POOL_MIN connections are opened at start-up instead (see options.ts)
      poolMax: 20,
      queueTimeout: 750,
      stmtCacheSize: 0,
      connectTimeout: 2,
      transportConnectTimeout: 2,
    });
    expect(
      poolAttributes(
        oracleConfig({ ORACLE_CONNECT_STRING: 'db/svc', DB_CONNECT_TIMEOUT_MS: '200' }),
      ).connectTimeout,
    ).toBe(1);
  });

  test('Autonomous Database mTLS wallet: alias, configDir, walletLocation and password', () => {
    const attributes = poolAttributes(
      oracleConfig({
        ORACLE_CONNECT_STRING: 'agentsdb_low',
        ORACLE_CONFIG_DIR: '/opt/wallet',
        ORACLE_WALLET_LOCATION: '/opt/wallet-pem',
        ORACLE_WALLET_PASSWORD: 'wallet-secret',
      }),
    );
    expect(attributes).toMatchObject({
      connectString: 'agentsdb_low',
      configDir: '/opt/wallet',
      walletLocation: '/opt/wallet-pem',
      walletPassword: 'wallet-secret',
    });
  });

  test('a wallet password without a wallet location uses the configuration directory', () => {
    const attributes = poolAttributes(
      oracleConfig({
        ORACLE_CONNECT_STRING: 'agentsdb_high',
        ORACLE_CONFIG_DIR: '/opt/wallet',
        ORACLE_WALLET_PASSWORD: 'wallet-secret',
      }),
    );
    expect(attributes.walletLocation).toBe('/opt/wallet');
  });

  test('one-way TLS: the tcps descriptor as given, and no wallet attributes at all', () => {
    const attributes = poolAttributes(oracleConfig({ ORACLE_CONNECT_STRING: ONE_WAY_TLS }));
    expect(attributes.connectString).toBe(ONE_WAY_TLS);
    expect(attributes).not.toHaveProperty('walletLocation');
    expect(attributes).not.toHaveProperty('walletPassword');
    expect(attributes).not.toHaveProperty('configDir');
  });

  test('a tnsnames.ora directory alone sets configDir only', () => {
    const attributes = poolAttributes(
      oracleConfig({ ORACLE_CONNECT_STRING: 'agents_tls', ORACLE_CONFIG_DIR: '/etc/tns' }),
    );
    expect(attributes.configDir).toBe('/etc/tns');
    expect(attributes).not.toHaveProperty('walletLocation');
  });

  test('node-oracledb accepts every variant (createPool validates; poolMin 0 opens nothing)', async () => {
    const variants: Record<string, string>[] = [
      { ORACLE_CONNECT_STRING: '127.0.0.1:1/none', DB_CONNECT_TIMEOUT_MS: '1500' },
      { ORACLE_CONNECT_STRING: ONE_WAY_TLS },
      {
        ORACLE_CONNECT_STRING: '127.0.0.1:1/none',
        ORACLE_WALLET_LOCATION: '/nonexistent',
        ORACLE_WALLET_PASSWORD: 'x',
      },
    ];
    for (const env of variants) {
      const pool = await oracledb.createPool(poolAttributes(oracleConfig(env)));
      expect(pool.connectionsOpen).toBe(0);
      // Kept as the pool's own callback, which node-oracledb runs for each new session.
      expect((pool as unknown as { sessionCallback: unknown }).sessionCallback).toBe(
        sessionCallback,
      );
      await pool.close(0);
    }
  });
});

describe('the session time zone (item 5 of issue 14)', () => {
  /** A connection that records what it runs and answers from a script. */
  function connection(fail?: Error) {
    const executed: string[] = [];
    const session = {
      execute: async (sql: string) => {
        executed.push(sql);
        if (fail) throw fail;
        return {};
      },
    } as unknown as SessionConnection;
    return { session, executed };
  }

  const call = (session: SessionConnection) =>
    new Promise<unknown>((resolve) => sessionCallback(session, '', resolve));

  test('every new pooled session is set to UTC and binary sorting before the pool hands it out', async () => {
    const { session, executed } = connection();
    expect(await call(session)).toBeUndefined();
    // One statement: NLS_SORT and NLS_COMP pinned beside TIME_ZONE, so ORDER BY and the
    // keyset pages' `>`/`<` compare alike whatever the instance sets (issue 34, item 5).
    expect(executed).toEqual([
      "ALTER SESSION SET TIME_ZONE = '+00:00' NLS_SORT = BINARY NLS_COMP = BINARY",
    ]);
    expect(executed[0]).toBe(SESSION_SETTINGS);
    expect(executed[0]?.startsWith(SESSION_TIME_ZONE)).toBe(true);
  });

  test('a session that cannot be set fails the getConnection (node-oracledb drops it)', async () => {
    const refused = new Error('ORA-01882: timezone region not found');
    const { session } = connection(refused);
    expect(await call(session)).toBe(refused);
  });
});

describe('connectTarget', () => {
  test('Easy Connect strings and aliases are shown as given', () => {
    expect(connectTarget('127.0.0.1:1/none')).toBe('127.0.0.1:1/none');
    expect(connectTarget(' agentsdb_low ')).toBe('agentsdb_low');
  });

  test('a descriptor is shortened to protocol, host, port and service', () => {
    expect(connectTarget(ONE_WAY_TLS)).toBe(
      'tcps://adb.eu-frankfurt-1.oraclecloud.com:1521/abc_agents_low.adb.oraclecloud.com',
    );
    expect(
      connectTarget(
        '(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db)(PORT=1521))(CONNECT_DATA=(SID=ORCL)))',
      ),
    ).toBe('db:1521/ORCL');
    expect(connectTarget('(DESCRIPTION=(ADDRESS_LIST=))')).toBe(
      'the configured connect descriptor',
    );
  });
});
