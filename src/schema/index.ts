import { lexicographicSortSchema } from 'graphql';
import { builder } from '../builder.js';
import './scalars.js';
import './agent.js';
import './exec-stat.js';
import './team.js';
import './team-run.js';
import './task-run.js';
import './tool-call.js';
import './human-wait.js';
import './agent-card.js';
import './subscription.js';
import './team-actions.js';
import './agent-execution.js';
import './team-activity.js';

export const schema = lexicographicSortSchema(builder.toSchema());
