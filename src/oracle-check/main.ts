import { parseCommand } from '../command-line.js';

parseCommand({
  name: 'npm run oracle:check',
  synopsis: '',
  about: `What works on your own database, in text worth pasting into a bug report: it connects
with the server's settings and driver, runs the start-up discovery, then every registered
statement once (first row only), then the batched, keyset, JSON-building and DESCRIBE_AGENT
statements on real keys. Prints names, codes, data types and timings only: no password and no
row data. Without ORACLE_CONNECT_STRING it checks the embedded database. Exit code 0 when every
statement ran.`,
  environment: {
    'ORACLE_CONNECT_STRING, ORACLE_USER, ORACLE_PASSWORD': "the server's connection",
    'ORACLE_CONFIG_DIR, ORACLE_WALLET_*': 'tnsnames.ora and the wallet, as for the server',
    ORACLE_VIEW_SCOPE: 'user or dba, as for the server',
  },
});

// After the command line (src/command-line.ts says why).
const { oracleCheck } = await import('./check.js');
// The exit code is the report's verdict: 0 when every statement ran.
process.exitCode = await oracleCheck(process.env, (line) => process.stdout.write(`${line}\n`));
