import { LRUCache } from 'lru-cache';
import type { KeysetWindow, Positioned } from '../../model/keyset.js';
import {
  type CatalogEdge,
  type ChildPlan,
  type ListPlan,
  PLANNED,
  type Planned,
  type Relation,
  setPlannedChild,
} from '../../model/plan.js';
import type {
  TeamRun,
  TeamRunFilter,
  TeamRunOrder,
  ToolCall,
  ToolCallFilter,
} from '../../model/team.js';
import { type Viewer, visibilityScope } from '../../model/viewer.js';
import type { Catalog } from '../catalog.js';
import type { Binds, BindValue, Row, Statement } from '../driver.js';
import { camelCase, num } from '../rows.js';
import { agentSql } from './agents.js';
import { compile, type Fragment, outputName, outputsOf, shapeId, sql } from './fragment.js';
import {
  type JsonArrayParts,
  type JsonList,
  jsonListColumn,
  type ListOrder,
  type ListReader,
  listPosition,
  orderOutput,
} from './json-lists.js';
import { keysetParts, type PageWindow } from './pages.js';
import { perCatalog, type Query, statement } from './query.js';
import {
  type RowTable,
  runOrderKeys,
  TOOL_CALL_ORDER_KEYS,
  teamHistorySql,
  type WindowedRun,
} from './team-history.js';
import { teamSql } from './teams.js';

/**
 * One statement for a history root and its plan (src/model/plan.ts), the same text for Oracle
 * and the embedded database, as grafast's pgSelect inlines every child list of a plan into its
 * parent's SQL:
 *
 *   WITH w AS (<the root's rows>)
 *   SELECT (<root list>) AS L0_JSON, (<child list>) AS L1_JSON, …, <total> FROM DUAL
 *
 * Every list is a JSON array of columns (jsonListColumn, src/db/sql/json-lists.ts), one per
 * planned relation at each field path, with only the columns that path reads. Every
 * history row carries TEAM_EXEC_ID and every history relation keeps it, so each list below the
 * root is bounded by the root's runs (`TEAM_EXEC_ID IN (SELECT w.TEAM_EXEC_ID FROM w …)`, or
 * below a list of runs a join on their positions `p`), whatever its depth, and visible exactly when its run is (docs/oracle.md): the root applies
 * the viewer's rule once. The agents of a list of tasks are those its names name, and the
 * team of a list of runs those its names name: lists of the statement, or, where the catalog
 * is cached across requests (`catalogApart`), left out and served from that cache
 * (CatalogEdge, src/repositories/team-history.ts). Decoded,
 * each list's rows are grouped by the relation's keys and set on their parents under the
 * field's name (PLANNED): the resolvers read them there, whatever their aliases. A plan is
 * canonical (src/schema/plan.ts), so differently written selections of the same needs build
 * the same text.
 */

/** A root's rows: the common table `w` and, unless the rows are given, its list. */
export interface PlanRoot<R> {
  readonly name: string;
  readonly type: 'TeamRun' | 'TaskRun' | 'ToolCall';
  /** The body of `w`: every select item of the type's table, and `extras`. */
  readonly with: Fragment;
  /** The root list read back, or null when the caller holds the rows (given). */
  readonly rows: {
    readonly where?: Fragment;
    /** Items of `w` read with each row besides the type's columns (RN, KEY0, …). */
    readonly extras: readonly Fragment[];
    /**
     * Extras that repeat a column of `w` (a keyset page's KEY1 is its TEAM_EXEC_ID): where
     * the list reads a member of the same text, the extra is not read again but copied from
     * that member into each row before `decode` sees it.
     */
    readonly copies?: readonly (readonly [string, Fragment])[];
    readonly orderBy: readonly ListOrder[];
    /** No two rows share their values of `orderBy` (JsonArrayParts.totalOrder). */
    readonly totalOrder: boolean;
    readonly decode: (row: Row, object: object) => R;
  } | null;
  /** The condition on `w` of the rows whose children are read; all of them when absent. */
  readonly scope?: Fragment;
  /** A scalar the statement returns too (TOTAL_COUNT). */
  readonly total?: Fragment;
}

export interface PlanResult<R> {
  /** The root list, in its order (empty for given rows). */
  readonly rows: R[];
  readonly total: number | null;
  /** The catalog relations the statement left out (`catalogApart`), with their parent rows. */
  readonly catalogEdges: readonly CatalogEdge[];
}

export interface PlanOptions {
  /** Rows the caller holds (a subscription event's runs), whose children are set on them. */
  readonly given?: readonly object[];
  /**
   * Whether the catalog rows a plan names (a run's team, a task's agent) are left out of the
   * statement, for the caller to serve from the cross-request catalog cache.
   */
  readonly catalogApart?: boolean;
}

type AnyTable = RowTable<object>;

interface ListNode {
  readonly index: number;
  readonly children: readonly ChildNode[];
}

type ChildNode =
  | {
      readonly key: string;
      readonly kind: 'relation';
      readonly relation: Relation;
      readonly node: ListNode;
    }
  | { readonly key: string; readonly kind: 'self'; readonly children: readonly ChildNode[] }
  /** A relation to the catalog served apart (PlanOptions.catalogApart). */
  | { readonly key: string; readonly kind: 'catalog'; readonly relation: Relation }
  | {
      readonly key: string;
      readonly kind: 'group';
      readonly members: readonly {
        readonly member: string;
        readonly relation: Relation;
        readonly node: ListNode;
      }[];
    };

/**
 * Rows by their values of some properties, one map level per property (as text: a number and
 * its digits are one key): no key is written per row, where joining a row's values into one
 * text cost a string each (the dashboard's 1,242 tool calls by run and task, 0.35 → 0.1 ms).
 */
type Groups = Map<string, object[] | Groups>;

const keyPart = (row: object, property: string) =>
  String((row as Record<string, unknown>)[property]);

function grouped(rows: readonly object[], properties: readonly string[]): Groups {
  const groups: Groups = new Map();
  const last = properties.length - 1;
  for (const row of rows) {
    let level = groups;
    for (let i = 0; i < last; i++) {
      const value = keyPart(row, properties[i] as string);
      let next = level.get(value) as Groups | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = keyPart(row, properties[last] as string);
    const group = level.get(value) as object[] | undefined;
    if (group) group.push(row);
    else level.set(value, [row]);
  }
  return groups;
}

/** The rows of `groups` whose values are the row's values of `properties`, in that order. */
function groupOf(groups: Groups, row: object, properties: readonly string[]): object[] {
  let level: Groups | object[] | undefined = groups;
  for (const property of properties) {
    level = (level as Groups).get(keyPart(row, property));
    if (level === undefined) return [];
  }
  return level as object[];
}

/** What decides a fragment's text: its text cut at its binds and their names, not values. */
function shapeOf(fragment: Fragment | undefined): string {
  if (!fragment) return '';
  const { pieces, placeholders } = compile(fragment);
  return `${pieces.join('\u0001')}\u0002${placeholders.join('\u0001')}`;
}

/**
 * Sets each planned child on its parents, recursively, from the decoded lists; a catalog
 * relation served apart goes to `edges` with its parents.
 */
function attach(
  parents: readonly object[],
  children: readonly ChildNode[],
  lists: object[][],
  edges: CatalogEdge[],
) {
  for (const child of children) {
    if (child.kind === 'catalog') {
      if (parents.length > 0) edges.push({ key: child.key, relation: child.relation, parents });
      continue;
    }
    if (child.kind === 'self') {
      for (const parent of parents) {
        const { [PLANNED]: _, ...row } = parent as Planned<object>;
        attach([row], child.children, lists, edges);
        setPlannedChild(parent, child.key, row);
      }
      continue;
    }
    if (child.kind === 'relation') {
      const rows = lists[child.node.index] ?? [];
      attach(rows, child.node.children, lists, edges);
      const groups = grouped(rows, child.relation.to);
      const { from, many } = child.relation;
      for (const parent of parents) {
        const group = groupOf(groups, parent, from);
        setPlannedChild(parent, child.key, many ? group : (group[0] ?? null));
      }
      continue;
    }
    const members = child.members.map(({ member, relation, node }) => {
      const rows = lists[node.index] ?? [];
      attach(rows, node.children, lists, edges);
      return { member, from: relation.from, groups: grouped(rows, relation.to) };
    });
    for (const parent of parents) {
      const value: Record<string, object[]> = {};
      for (const { member, from, groups } of members) {
        value[member] = groupOf(groups, parent, from);
      }
      setPlannedChild(parent, child.key, value);
    }
  }
}

export const historyPlanSql = perCatalog((catalog: Catalog) => {
  const history = teamHistorySql(catalog);
  const tables = history.tables as unknown as Record<HistoryType, AnyTable>;
  const agents = agentSql(catalog);
  const teams = teamSql(catalog);
  const views = {
    TeamRun: history.readable.runs,
    TaskRun: history.readable.tasks,
    ToolCall: history.readable.calls,
  };

  /**
   * The output columns a list of `table` reads for `plan`: its columns, and for a root list
   * its keys too (a node's task is found by its TASK_ORDER). A list below a root reads only
   * what its plan names, the keys its relations join on included (src/schema/plan.ts): a
   * task's TASK_ORDER only when its calls or its id are asked for.
   */
  const membersOf = (table: AnyTable, plan: ListPlan, keys: boolean): string[] =>
    table.columns
      .filter(
        ([property]) =>
          plan.columns.has('*') ||
          plan.columns.has(property) ||
          (keys && table.keys.includes(property)),
      )
      .map(([, column]) => column);

  /** The select items of `table` for these output columns and its order. */
  const itemsOf = (table: AnyTable, columns: readonly string[]): Fragment[] =>
    [...new Set([...columns, ...table.orderBy])].map((column) => {
      const item = table.select[column];
      if (!item) throw new Error(`no column ${column} in a history table`);
      return item;
    });

  /**
   * The statement of `root` with `plan`, built once per shape: a root's name, its own text
   * (whatever its binds' values), the viewer's visibility and the plan's key decide every
   * character of the text, so the statement, its lists' readers and the tree they hang on are
   * made for the first request of a shape and kept (`shapes`); a later request
   * gives only its root's binds and its rows' decoder. Lists are numbered as they are met (L0
   * the root's).
   */
  function planned<R>(
    viewer: Viewer,
    root: PlanRoot<R>,
    plan: ListPlan,
    { given = [], catalogApart = false }: PlanOptions = {},
  ): Query<PlanResult<R>> {
    const rootParts = [root.with, root.rows?.where, root.scope, root.total];
    const rowsKey = root.rows ? rowsKeyOf(root.rows.extras, root.rows.orderBy) : 'given';
    let partsKey = '';
    for (const part of rootParts) partsKey += `\u0000${part ? shapeId(part) : ''}`;
    const key = `${root.name}\u0000${root.type}\u0000${visibilityScope(viewer)}\u0000${planId(plan)}\u0000${catalogApart ? 'apart' : 'inline'}\u0000${rowsKey}${partsKey}`;
    let shape = shapes.get(key);
    if (shape === undefined) {
      shape = build(viewer, root, plan, catalogApart);
      shapes.set(key, shape);
    }
    const { lists, rootIndex, children } = shape;
    // Every bind of the text but the root's is the viewer's, the same for every request of
    // this shape; the root's are this request's.
    const binds: Record<string, BindValue> = { ...shape.binds };
    for (const part of rootParts) if (part) Object.assign(binds, part.binds);
    const rows = root.rows;
    const decodeRoot = tables[root.type].decode as (row: Row) => object;
    const { copies } = shape;
    // The reader hands one reused row object: both values are made from it at once.
    const decodeRow = rows
      ? (row: Row) => {
          for (const [extra, member] of copies)
            (row as Record<string, unknown>)[extra] = row[member];
          const object = decodeRoot(row);
          return { object, result: rows.decode(row, object) };
        }
      : undefined;
    const decode = (row: Row): PlanResult<R> => {
      // The root list comes first: the lists below name its runs by position (runIds).
      const decoded: unknown[][] = [];
      let runIds: readonly unknown[] = [];
      for (let i = 0; i < lists.length; i++) {
        const list = lists[i] as Shape['lists'][number];
        if (i !== rootIndex || !decodeRow) {
          decoded.push(list.read(row[list.key], list.decode, list.positioned ? runIds : undefined));
          continue;
        }
        const rootRows = list.read(row[list.key], decodeRow);
        runIds = rootRows.map(({ object }) => (object as TeamRun).execId);
        decoded.push(rootRows);
      }
      const roots = (rootIndex >= 0 ? decoded[rootIndex] : []) as { object: object; result: R }[];
      const objects = rows ? roots.map((r) => r.object) : [...given];
      if (rootIndex >= 0) decoded[rootIndex] = objects;
      const catalogEdges: CatalogEdge[] = [];
      attach(objects, children, decoded as object[][], catalogEdges);
      return {
        rows: roots.map((r) => r.result),
        total: root.total ? num(row.totalCount) : null,
        catalogEdges,
      };
    };
    return {
      statement: shape.statement,
      binds,
      decode,
      decodeRows: (answer) => answer.map(decode),
      agentDetails: false,
      noRows: shape.noRows,
    };
  }

  /** What `planned` keeps of a shape: its statement and what reads its lists. */
  interface Shape {
    readonly statement: Statement;
    readonly binds: Binds;
    readonly noRows: boolean;
    readonly lists: readonly {
      readonly key: string;
      readonly read: ListReader;
      /** The rows' decoder; the root's is each request's own. */
      readonly decode: (row: Row) => object;
      /** Its rows name their run by its position in the root list (`p`). */
      readonly positioned: boolean;
    }[];
    readonly rootIndex: number;
    /** The root's extras copied from its members (PlanRoot's `copies`), as row keys. */
    readonly copies: readonly (readonly [string, string])[];
    readonly children: readonly ChildNode[];
  }

  /** The 256 most recently used shapes kept: a text each, a few kilobytes. */
  const shapes = new LRUCache<string, Shape>({ max: 256 });

  /**
   * A number per plan key, never given twice, for the shapes' keys: a plan's key is a long
   * text, kept with its plan and read again by every operation of its document, so looking it
   * up costs a comparison of the same string, where writing it into each key cost its copy
   * and hash (0.7 us of planned()'s 2.2, microbenchmark). An evicted plan key gets a new
   * number, and its old shapes age out.
   */
  const planIds = new LRUCache<string, number>({ max: 1024 });
  let plansSeen = 0;
  const planId = (plan: ListPlan): number => {
    let id = planIds.get(plan.key);
    if (id === undefined) {
      id = ++plansSeen;
      planIds.set(plan.key, id);
    }
    return id;
  };

  function build(
    viewer: Viewer,
    root: PlanRoot<unknown>,
    plan: ListPlan,
    catalogApart: boolean,
  ): Shape {
    const lists: Shape['lists'][number][] = [];
    const selects: Fragment[] = [];
    const add = (list: JsonList<object>) => {
      const column = jsonListColumn(root.name, list.parts, lists.length);
      lists.push({
        key: column.key,
        read: column.read,
        decode: list.decode,
        positioned: list.parts.parentPosition !== undefined,
      });
      selects.push(column.select);
      return lists.length - 1;
    };
    const scope = sql`SELECT w.TEAM_EXEC_ID FROM w ${sql.where(root.scope)}`;
    const rootTable = tables[root.type];

    let rootIndex = -1;
    /** The root runs' positions in the root list (listPositions), when the root lists runs. */
    let positions: Fragment | undefined;
    let positionsRead = false;
    const copies: (readonly [string, string])[] = [];
    if (root.rows) {
      // The columns the root's order names are read too (a team's page groups by TEAM_NAME).
      const ordering = root.rows.orderBy
        .map(orderOutput)
        .filter((column) => column in rootTable.select);
      const members = [...new Set([...membersOf(rootTable, plan, true), ...ordering])];
      // An extra of the same text as a member is that member's array again: copied instead.
      const copied = new Map<string, string>();
      for (const [extra, column] of root.rows.copies ?? []) {
        const text = shapeOf(column);
        const member = members.find((m) => shapeOf(rootTable.select[m]) === text);
        if (member === undefined) continue;
        copied.set(extra, member);
        copies.push([camelCase(extra), camelCase(member)]);
      }
      // An order on a copied extra reads its member.
      const orderBy = root.rows.orderBy.map((order) => {
        const member = copied.get(orderOutput(order));
        if (member === undefined) return order;
        return typeof order === 'string' ? member : { ...order, output: member };
      });
      const extraItems = root.rows.extras.filter((item) => !copied.has(outputName(item)));
      const extras = extraItems.map(outputName);
      const parts: JsonArrayParts = {
        select: outputsOf([...itemsOf(rootTable, members), ...extraItems]),
        members: [...members, ...extras],
        from: sql`w ${sql.where(root.rows.where)}`,
        orderBy,
        totalOrder: root.rows.totalOrder,
      };
      // Decoded with each request's own decoder (planned).
      rootIndex = add({ parts, decode: rootTable.decode as (row: Row) => object });
      // The runs whose children are read, each with its index in the root list: the numbering
      // is over the root list's rows, the children's scope applied after it.
      if (root.type === 'TeamRun') {
        positions = sql`SELECT w.TEAM_EXEC_ID AS PARENT_KEY, w.PARENT_POSITION
          FROM (SELECT w.*, ${listPosition(root.name, parts)} AS PARENT_POSITION FROM ${parts.from}) w
          ${sql.where(root.scope)}`;
      }
    }
    const listOf = (relation: Relation, childPlan: ListPlan, parentTable: AnyTable): ListNode => {
      if (isCatalog(relation)) {
        // The catalog rows the parent's rows name (a task's agent without DESCRIBE_AGENT, a
        // run's team), as their loaders read them.
        // The parent's property that holds the name (a run's team is its owner's too).
        const property = relation.from[relation.to.indexOf('name')];
        const column = parentTable.columns.find(([p]) => p === property)?.[1] ?? '';
        const names = sql`SELECT ${itemsOf(parentTable, [column])[0] as Fragment} FROM ${parentTable.from}
          WHERE TEAM_EXEC_ID IN (${scope})`;
        const list = (
          relation.target === 'Agent'
            ? agents.namedList(viewer, names)
            : teams.namedList(viewer, names)
        ) as JsonList<object>;
        return { index: add(list), children: [] };
      }
      const table = tables[relation.target as HistoryType];
      const members = membersOf(table, childPlan, false);
      // A task or tool call below a list of runs names its run by the run's position there
      // (a number) instead of its TEAM_EXEC_ID; the reader sets teamExecId from the root's rows.
      const byPosition = positions !== undefined && relation.target !== 'TeamRun';
      if (byPosition) positionsRead = true;
      const ownMembers = byPosition ? members.filter((m) => m !== 'TEAM_EXEC_ID') : members;
      const parts: JsonArrayParts = byPosition
        ? {
            select: [...itemsOf(table, ownMembers), sql`p.PARENT_POSITION`],
            members: [...ownMembers, 'PARENT_POSITION'],
            // `p` holds the runs of the scope: it bounds the list as TEAM_EXEC_ID IN (…) does
            // below other roots.
            from: sql`${table.from} JOIN p ON p.PARENT_KEY = TEAM_EXEC_ID`,
            // Its run's position orders it as its TEAM_EXEC_ID did (one each), a number to sort.
            orderBy: table.orderBy.map((c) => (c === 'TEAM_EXEC_ID' ? 'PARENT_POSITION' : c)),
            totalOrder: table.totalOrder,
            parentPosition: { member: 'PARENT_POSITION', property: 'teamExecId' },
          }
        : {
            select: itemsOf(table, members),
            members,
            from: sql`${table.from} WHERE TEAM_EXEC_ID IN (${scope})`,
            orderBy: table.orderBy,
            totalOrder: table.totalOrder,
          };
      const index = add({ parts, decode: table.decode as (row: Row) => object });
      return { index, children: childrenOf(childPlan, table) };
    };

    /**
     * A relation whose view cannot be read (not granted, missing) is left to its field's
     * loader, which reports it; the rest of the plan is read.
     */
    const readable = (relation: Relation) =>
      (relation.target === 'Agent'
        ? catalog.agents
        : relation.target === 'Team'
          ? catalog.teams
          : views[relation.target]
      ).columns !== null;

    function childrenOf(parentPlan: ListPlan, parentTable: AnyTable): ChildNode[] {
      const planned = [...parentPlan.children].filter(
        ([, child]) =>
          child.kind === 'self' ||
          (child.kind === 'relation'
            ? readable(child.relation)
            : [...child.members.values()].every(({ relation }) => readable(relation))),
      );
      return planned.map(([key, child]: [string, ChildPlan]): ChildNode => {
        if (child.kind === 'self') {
          return { key, kind: 'self', children: childrenOf(child.plan, parentTable) };
        }
        if (child.kind === 'relation') {
          if (catalogApart && isCatalog(child.relation)) {
            return { key, kind: 'catalog', relation: child.relation };
          }
          return {
            key,
            kind: 'relation',
            relation: child.relation,
            node: listOf(child.relation, child.plan, parentTable),
          };
        }
        return {
          key,
          kind: 'group',
          members: [...child.members].map(([member, { relation, plan: memberPlan }]) => ({
            member,
            relation,
            node: listOf(relation, memberPlan, parentTable),
          })),
        };
      });
    }

    const children = childrenOf(plan, rootTable);
    if (root.total) selects.push(sql`${root.total} AS TOTAL_COUNT`);
    const ranked = positions && positionsRead ? sql`, p AS (${positions})` : sql``;
    const body = sql`WITH w AS (${root.with})${ranked} SELECT ${sql.join(selects, ', ')} FROM DUAL`;
    return {
      statement: statement(root.name, body),
      binds: body.binds,
      noRows: body.noRows,
      lists,
      rootIndex,
      copies,
      children,
    };
  }

  // A root's extras and order, made once (rowsKeyOf keeps their text by them).
  const NO_EXTRAS: readonly Fragment[] = [];
  const windowExtras = [sql`RN`, sql`TOTAL_COUNT`];
  const windowOrder = [...history.teamOfRun, 'RN'];
  const byExecId = ['TEAM_EXEC_ID'];
  const waitingOrder = [...history.teamOfRun, 'START_DATE', 'TEAM_EXEC_ID'];

  const runItems = Object.values(tables.TeamRun.select);
  const teamPartition = sql.join(
    history.teamOfRun.map((column) => sql`h.${sql.raw(column)}`),
    ', ',
  );
  const runSelect = sql.join(runItems, ', ');
  const tasksOnRuns = (viewer: Viewer) => history.runVisible(viewer, sql`t`);

  return {
    planned,
    /**
     * The windows of runs of several teams (Team.runs): each team's newest runs under the
     * filter, one window per team; each team's first run comes back too (RN = 1, dropped
     * unless in the window), so a window past a team's last run still carries its total.
     */
    runsOfTeams: (
      filter: TeamRunFilter,
      window: PageWindow,
      viewer: Viewer,
      teams: Fragment,
    ): PlanRoot<WindowedRun> => {
      const inWindow = sql`w.RN > ${sql.bind('page_offset', window.offset)} AND w.RN <= ${sql.bind('page_end', window.offset + window.limit)}`;
      return {
        name: 'history.runsOfTeams',
        type: 'TeamRun',
        with: sql`SELECT ${runSelect},
             ROW_NUMBER() OVER (PARTITION BY ${teamPartition} ORDER BY h.START_DATE DESC NULLS LAST, h.TEAM_EXEC_ID) AS RN,
             COUNT(*) OVER (PARTITION BY ${teamPartition}) AS TOTAL_COUNT
           FROM ${tables.TeamRun.from}
           ${sql.where(sql`h.TEAM_NAME IN (${teams})`, ...history.runFilter(viewer, filter))}`,
        rows: {
          where: sql`(${inWindow}) OR w.RN = 1`,
          extras: windowExtras,
          orderBy: windowOrder,
          // RN numbers each team's runs.
          totalOrder: true,
          decode: (row, run) => ({
            run: run as TeamRun,
            rowNumber: num(row.rn),
            totalCount: num(row.totalCount),
          }),
        },
        scope: inWindow,
      };
    },
    /** A keyset page of runs across teams (Query.teamRuns), with its total over the filter. */
    runsPage: (
      viewer: Viewer,
      filter: TeamRunFilter,
      order: TeamRunOrder,
      window: KeysetWindow,
    ): PlanRoot<Positioned<TeamRun>> => {
      const page = keysetParts(
        {
          from: tables.TeamRun.from,
          filter: history.runFilter(viewer, filter),
          keys: runOrderKeys(order),
        },
        window,
      );
      return keysetRoot('history.runsPage', 'TeamRun', runSelect, page, window);
    },
    /** A keyset page of tool calls (Query.toolCalls), with its total over the filter. */
    callsPage: (
      viewer: Viewer,
      filter: ToolCallFilter,
      window: KeysetWindow,
    ): PlanRoot<Positioned<ToolCall>> => {
      const page = keysetParts(
        {
          from: tables.ToolCall.from,
          filter: [
            filter.toolName
              ? sql`TOOL_NAME = ${sql.bind('tool_name', filter.toolName)}`
              : undefined,
            filter.agentName
              ? sql`AGENT_NAME = ${sql.bind('agent_name', filter.agentName)}`
              : undefined,
            filter.teamExecId
              ? sql`TEAM_EXEC_ID = ${sql.bind('team_exec_id', filter.teamExecId)}`
              : undefined,
            history.runVisible(viewer, sql`tc`),
          ],
          keys: TOOL_CALL_ORDER_KEYS,
        },
        window,
      );
      return keysetRoot(
        'history.callsPage',
        'ToolCall',
        sql.join(Object.values(tables.ToolCall.select), ', '),
        page,
        window,
      );
    },
    /** Runs by TEAM_EXEC_ID (teamRun, node, nodes, federation's entities). */
    runsByIds: (viewer: Viewer, ids: Fragment): PlanRoot<TeamRun> => ({
      name: 'history.runsByIds',
      type: 'TeamRun',
      with: sql`SELECT ${runSelect} FROM ${tables.TeamRun.from}
        ${sql.where(sql`h.TEAM_EXEC_ID IN (${ids})`, history.viewerRuns(viewer))}`,
      rows: {
        extras: NO_EXTRAS,
        orderBy: byExecId,
        totalOrder: true,
        decode: (_row, run) => run as TeamRun,
      },
    }),
    /** Every task of these runs (TaskRun nodes: a task's id holds its run's). */
    tasksOfRunIds: (viewer: Viewer, ids: Fragment): PlanRoot<object> => ({
      name: 'history.tasksByRunIds',
      type: 'TaskRun',
      with: sql`SELECT ${sql.join(Object.values(tables.TaskRun.select), ', ')} FROM ${tables.TaskRun.from}
        ${sql.where(sql`TEAM_EXEC_ID IN (${ids})`, tasksOnRuns(viewer))}`,
      rows: {
        extras: NO_EXTRAS,
        orderBy: tables.TaskRun.orderBy,
        totalOrder: tables.TaskRun.totalOrder,
        decode: (_row, task) => task,
      },
    }),
    /** Tool calls by INVOCATION_ID (ToolCall nodes). */
    callsByIds: (viewer: Viewer, ids: Fragment): PlanRoot<ToolCall> => ({
      name: 'history.callsByIds',
      type: 'ToolCall',
      with: sql`SELECT ${sql.join(Object.values(tables.ToolCall.select), ', ')} FROM ${tables.ToolCall.from}
        ${sql.where(sql`INVOCATION_ID IN (${ids})`, history.runVisible(viewer, sql`tc`))}`,
      rows: {
        extras: NO_EXTRAS,
        orderBy: tables.ToolCall.orderBy,
        totalOrder: tables.ToolCall.totalOrder,
        decode: (_row, call) => call as ToolCall,
      },
    }),
    /** The runs of these teams waiting for a human (Team.waitingForHuman), oldest first. */
    waitingOfTeams: (viewer: Viewer, teams: Fragment): PlanRoot<TeamRun> => ({
      name: 'history.waitingOfTeams',
      type: 'TeamRun',
      with: sql`SELECT ${runSelect} FROM ${tables.TeamRun.from}
        ${sql.where(sql`h.TEAM_NAME IN (${teams})`, sql`h.STATE = 'WAITING_FOR_HUMAN'`, history.viewerRuns(viewer))}`,
      rows: {
        extras: NO_EXTRAS,
        orderBy: waitingOrder,
        totalOrder: true,
        decode: (_row, run) => run as TeamRun,
      },
    }),
    /** Runs the caller holds (a subscription event's): only the children are read. */
    ofRuns: (viewer: Viewer, ids: Fragment): PlanRoot<never> => ({
      name: 'history.ofRuns',
      type: 'TeamRun',
      with: sql`SELECT h.TEAM_EXEC_ID FROM ${tables.TeamRun.from}
        ${sql.where(sql`h.TEAM_EXEC_ID IN (${ids})`, history.viewerRuns(viewer))}`,
      rows: null,
    }),
  };

  function keysetRoot<T>(
    name: string,
    type: 'TeamRun' | 'ToolCall',
    select: Fragment,
    page: ReturnType<typeof keysetParts>,
    window: KeysetWindow,
  ): PlanRoot<Positioned<T>> {
    const keyItems = keyItemsOf(page.keyOutputs);
    return {
      name,
      type,
      with: sql`SELECT ${select}, ${page.keyColumns}
        FROM ${tables[type].from} ${page.where}
        ORDER BY ${page.orderBy}
        FETCH FIRST ${sql.bind('page_limit', window.limit)} ROWS ONLY`,
      rows: {
        extras: keyItems,
        copies: page.keyCopies,
        // The page's own order, which ends in a key: PostgreSQL reads `w` in it (the index's
        // order) and sorts nothing for the list, where a row number of it cost a window over
        // the page and a sort by the number (docs/operations.md, "Shapes against the anchor").
        orderBy: page.keyOrder,
        totalOrder: true,
        decode: (row, node) => page.positioned(node as T, row),
      },
      ...(window.counted === false ? {} : { total: sql`(SELECT COUNT(*) FROM ${page.filtered})` }),
    };
  }
});

/** The history row types: a relation to any other reads the catalog's rows (an agent, a team). */
type HistoryType = 'TeamRun' | 'TaskRun' | 'ToolCall';

const isCatalog = (
  relation: Relation,
): relation is Relation & { readonly target: Exclude<Relation['target'], HistoryType> } =>
  relation.target === 'Agent' || relation.target === 'Team';

/** The key items made so far, by output name: the same few for every page. */
const KEY_ITEMS = new Map<string, Fragment>();

/**
 * KEY0, KEY0_SECONDS, …: the output names keysetParts gives its key items, each made once (a
 * fragment has no binds and is never changed), so a page's plan key reads their output names
 * where they are kept instead of reading new fragments' text on every page.
 */
function keyOutput(output: string): Fragment {
  let item = KEY_ITEMS.get(output);
  if (item === undefined) {
    const match = /^KEY(\d+)(_SECONDS)?$/.exec(output);
    if (!match) throw new Error(`${output} is not a key column`);
    const index = Number(match[1]);
    item = match[2] ? sql`${sql.indexed('KEY', index)}_SECONDS` : sql.indexed('KEY', index);
    KEY_ITEMS.set(output, item);
  }
  return item;
}

/** The key items of a page's key outputs (made once per keys and direction: pages.ts). */
const keyItemLists = new WeakMap<readonly string[], readonly Fragment[]>();

function keyItemsOf(outputs: readonly string[]): readonly Fragment[] {
  let items = keyItemLists.get(outputs);
  if (items === undefined) {
    items = outputs.map(keyOutput);
    keyItemLists.set(outputs, items);
  }
  return items;
}

/** The key text of a root's extras and order, by the arrays, which its roots make once. */
const rowsKeys = new WeakMap<readonly Fragment[], WeakMap<readonly ListOrder[], string>>();

/** What a root's extras and order add to its shape's key: their output names and order. */
function rowsKeyOf(extras: readonly Fragment[], orderBy: readonly ListOrder[]): string {
  let byOrder = rowsKeys.get(extras);
  if (byOrder === undefined) {
    byOrder = new WeakMap();
    rowsKeys.set(extras, byOrder);
  }
  let key = byOrder.get(orderBy);
  if (key === undefined) {
    key = '';
    for (const extra of extras) key += `${outputName(extra)},`;
    key += ';';
    for (const order of orderBy) key += `${orderText(order)},`;
    byOrder.set(orderBy, key);
  }
  return key;
}

/** A list's order as a shape's key spells it. */
const orderText = (order: ListOrder): string =>
  typeof order === 'string'
    ? order
    : `${order.output} ${order.direction}${order.nulls === undefined ? '' : ` NULLS ${order.nulls}`}`;
