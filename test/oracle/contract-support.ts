/**
 * What every contract-suite file shares: one driver per file and target, counting the
 * statements it issues, and the catalogs of both view scopes discovered through it.
 */
import { afterAll, beforeAll } from 'vitest';
import type { ViewScope } from '../../src/config.js';
import { type Catalog, discoverCatalog } from '../../src/db/catalog.js';
import { countStatements, type Driver } from '../../src/db/driver.js';
import type { Target } from './targets.js';

export interface ContractTarget {
  /** The counting driver (valid once the enclosing describe's beforeAll has run). */
  readonly driver: Driver;
  /** Both view scopes' catalogs, discovered through the driver. */
  readonly catalogs: Readonly<Record<ViewScope, Catalog>>;
  /** Runs `work` and returns its result with the names of the statements it issued. */
  counted<T>(work: () => Promise<T>): Promise<[T, string[]]>;
}

/** Opens `target` for the enclosing describe block and closes it after. */
export function useContractTarget(target: Target): ContractTarget {
  let opened: { driver: Driver; close(): Promise<void> } | undefined;
  let statements: string[] = [];
  let driver: Driver | undefined;
  const catalogs = {} as Record<ViewScope, Catalog>;

  beforeAll(async () => {
    opened = await target.open();
    const counting = countStatements(opened.driver, ({ name }) => {
      statements.push(name);
    });
    for (const scope of ['dba', 'user'] as const) {
      catalogs[scope] = await discoverCatalog(counting, scope, target.sessionUser);
    }
    driver = counting;
  }, 600_000);
  afterAll(() => opened?.close());

  return {
    get driver(): Driver {
      if (!driver) throw new Error(`the ${target.name} driver is not open yet`);
      return driver;
    },
    catalogs,
    async counted<T>(work: () => Promise<T>): Promise<[T, string[]]> {
      statements = [];
      const result = await work();
      return [result, statements];
    },
  };
}

/** PERCENTILE_CONT: linear interpolation between the two closest ranks. */
/** What the repositories do to computed figures (averages, percentiles, ratios). */
export const rounded = (value: number, decimals: number): number =>
  Math.round(value * 10 ** decimals) / 10 ** decimals;

export function percentileCont(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = sorted[Math.floor(position)] as number;
  const upper = sorted[Math.ceil(position)] as number;
  return lower + (upper - lower) * (position - Math.floor(position));
}
