// Stands in for `cron-schedule` (a cron-expression parser, about 8 KiB minified).
//
// Why it never runs: agents' scheduler parses a cron expression only for `this.schedule()` with
// a string `when` (or for a cron row such a call stored). Nothing here schedules by cron: the
// Durable Objects use alarms directly, and agents' own schedules use delays in seconds.

import { leftOut } from './left-out';

export function parseCronExpression(): never {
  throw leftOut('cron-schedule (parseCronExpression)', 'cron-schedule.ts');
}
