import type { PGlite } from '@electric-sql/pglite';
import type { EmbeddedDatabaseConfig } from '../../config.js';
import { historySeconds, movedDate, startSession } from './database.js';
import { DEMO_DATE_COLUMNS } from './demo-data.js';

/**
 * An embedded database handed from one server to the next, as the tests' servers are
 * (test/support/databases.ts): loading the snapshot into a new PGlite costs a start about half
 * a second of CPU, where putting the rows back costs a tenth of that. When it opens, the
 * database keeps a copy of every table as the snapshot holds it (keepPristine); resetting it
 * gives the next server what a new database would: the same session settings, no prepared
 * statement, cursor, temporary table, listener or advisory lock (DISCARD ALL), the snapshot's
 * rows with their history moved to the moment of the reset, and the same schema, or no reuse
 * at all (a test that changed the schema leaves a database nobody else gets).
 */
export interface Pristine {
  /** The tables' restores, TRUNCATE's list first. */
  readonly truncate: string;
  readonly restores: readonly { readonly text: string; readonly dated: boolean }[];
  /** catalogDigest() as the database opened, its copies included. */
  readonly catalog: string;
}

/** Where the copies live: a schema no statement of agent-graph names. */
export const PRISTINE_SCHEMA = 'emb_pristine';

/**
 * Every table's column list (the schema's order), as quoted identifiers, in every schema the
 * database itself did not create.
 */
const TABLES = `
  SELECT n.nspname AS schema, c.relname AS name, format('%I.%I', n.nspname, c.relname) AS qualified,
    array_agg(quote_ident(a.attname) ORDER BY a.attnum) AS quoted,
    array_agg(a.attname::text ORDER BY a.attnum) AS columns
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND n.nspname NOT LIKE 'pg\\_%'
  GROUP BY n.nspname, c.relname
  ORDER BY 1, 2`;

/**
 * Everything a statement could have changed in the schema: relations (a rename, a new or
 * dropped view, table, index or column), functions and their bodies, views' rules,
 * constraints, triggers, types, schemas, roles and the settings ALTER DATABASE or ALTER ROLE
 * stores. A table's storage (TRUNCATE gives it new files) and its statistics are not schema;
 * nor are the temporary schemas a session makes once. PostgreSQL's own functions, types and
 * rules (OIDs below FirstNormalObjectId, 16384) are counted rather than read: reading every
 * function's body made the digest 27-64 ms of a reset, 7-14 ms without (load 15).
 */
const CATALOG_DIGEST = `
  SELECT md5(string_agg(entry, ',' ORDER BY entry)) AS digest FROM (
    SELECT concat_ws(':', 'c', c.oid, c.relname, c.relnamespace, c.relkind::text, c.relnatts) AS entry
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
    UNION ALL SELECT concat_ws(':', 'a', attrelid, attnum, attname, atttypid, attnotnull,
        atthasdef, attisdropped) FROM pg_attribute WHERE attrelid >= 16384 AND attnum > 0
    UNION ALL SELECT concat_ws(':', 'p', oid, proname, pronamespace, md5(prosrc)) FROM pg_proc
      WHERE oid >= 16384
    UNION ALL SELECT concat_ws(':', 'P', count(*)) FROM pg_proc
    UNION ALL SELECT concat_ws(':', 'r', oid, ev_class, md5(ev_action::text)) FROM pg_rewrite
      WHERE oid >= 16384
    UNION ALL SELECT concat_ws(':', 'R', count(*)) FROM pg_rewrite
    UNION ALL SELECT concat_ws(':', 'k', oid, conname, conrelid) FROM pg_constraint
    UNION ALL SELECT concat_ws(':', 't', oid, tgname, tgrelid, tgenabled::text) FROM pg_trigger
    UNION ALL SELECT concat_ws(':', 'y', oid, typname, typnamespace) FROM pg_type
      WHERE oid >= 16384
    UNION ALL SELECT concat_ws(':', 'Y', count(*)) FROM pg_type
    UNION ALL SELECT concat_ws(':', 'd', adrelid, adnum, md5(adbin::text)) FROM pg_attrdef
    UNION ALL SELECT concat_ws(':', 'n', oid, nspname) FROM pg_namespace
      WHERE nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
    UNION ALL SELECT concat_ws(':', 'u', oid, rolname) FROM pg_authid
    UNION ALL SELECT concat_ws(':', 's', setdatabase, setrole, setconfig::text) FROM pg_db_role_setting
  ) catalog`;

async function catalogDigest(pg: PGlite): Promise<string> {
  const { rows } = await pg.query<{ digest: string }>(CATALOG_DIGEST);
  return rows[0]?.digest ?? '';
}

/**
 * Copies every table as it is now (the snapshot's rows, before the history moves) into
 * PRISTINE_SCHEMA, and writes the statements that put them back.
 */
export async function keepPristine(pg: PGlite): Promise<Pristine> {
  const { rows: tables } = await pg.query<{
    schema: string;
    name: string;
    qualified: string;
    quoted: string[];
    columns: string[];
  }>(TABLES);
  await pg.exec(`CREATE SCHEMA ${PRISTINE_SCHEMA}`);
  const restores = [];
  for (const [i, table] of tables.entries()) {
    const copy = `${PRISTINE_SCHEMA}.t${i}`;
    await pg.exec(`CREATE TABLE ${copy} AS SELECT * FROM ${table.qualified}`);
    const dates = table.schema === 'public' ? (DEMO_DATE_COLUMNS[table.name] ?? []) : [];
    const selected = table.quoted.map((quoted, c) =>
      dates.includes(table.columns[c] as string) ? movedDate(quoted) : quoted,
    );
    restores.push({
      text: `INSERT INTO ${table.qualified} (${table.quoted.join(', ')}) SELECT ${selected.join(', ')} FROM ${copy}`,
      dated: dates.length > 0,
    });
  }
  return {
    truncate: `TRUNCATE ${tables.map((table) => table.qualified).join(', ')}`,
    restores,
    catalog: await catalogDigest(pg),
  };
}

/**
 * Gives the database back as a new one would open with `config`, if its schema is the one it
 * opened with; false when it is not, and the database must not serve again.
 */
export async function resetToPristine(
  pg: PGlite,
  pristine: Pristine,
  config: Pick<EmbeddedDatabaseConfig, 'sessionUser' | 'demoNow'>,
): Promise<boolean> {
  // Before anything else: a search_path or role a test set must not change what follows.
  await pg.exec('DISCARD ALL');
  if ((await catalogDigest(pg)) !== pristine.catalog) return false;
  const seconds = historySeconds(config.demoNow ?? Date.now());
  await pg.transaction(async (tx) => {
    await tx.exec(pristine.truncate);
    for (const { text, dated } of pristine.restores) {
      await tx.query(text, dated ? [seconds] : []);
    }
  });
  await startSession(pg, config);
  return true;
}
