/**
 * The RUN_TEAM hand-off on every target (the embedded database always, Oracle when
 * ORACLE_TEST_* is set). Only the case that creates no job: a run that does not wait. On
 * Oracle that still compiles the whole block against DBMS_SCHEDULER and
 * DBMS_CLOUD_AI, so it is also the self-check's probe (docs/oracle.md).
 */
import { describe, expect, test } from 'vitest';
import { runTeamJobName, runTeamSql } from '../../src/db/sql/run-team.js';
import { useContractTarget } from '../oracle/contract-support.js';
import { TARGETS } from '../oracle/targets.js';

for (const target of TARGETS) {
  const title = `RUN_TEAM hand-off on ${target.name}${target.skipReason ? ` (${target.skipReason})` : ''}`;
  describe.skipIf(target.skipReason !== undefined)(title, () => {
    const contract = useContractTarget(target);

    test.each(['user', 'dba'] as const)(
      'answering a run that is not in the history is NOT_WAITING, in one round trip (%s views)',
      async (scope) => {
        const sql = runTeamSql(contract.catalogs[scope]);
        const [row, statements] = await contract.counted(() =>
          contract.driver.runBlock(
            sql.block,
            sql.binds({
              jobName: runTeamJobName('ANSWER', 'NO_SUCH_RUN', 'NO_SUCH_CALL'),
              execId: 'NO_SUCH_RUN',
              teamOwner: contract.catalogs[scope].sessionUser,
              teamName: 'NO_SUCH_TEAM',
              prompt: 'approve',
              conversationId: '6f1c2a1e-0d3b-4b8e-9a55-3c2f1e0b7d41',
            }),
          ),
        );
        expect(sql.decode(row)).toEqual({ kind: 'not_waiting', state: null });
        expect(statements).toEqual(['runTeam.submit']);
      },
    );
  });
}
