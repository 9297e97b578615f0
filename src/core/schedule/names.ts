// A schedule's name: what its crontab line is tagged with, its definition file is called, and its runs are
// recorded under. Lowercase letters, digits and "-", so it is safe in a file name and a crontab comment alike.
export const SCHEDULE_ENV = "SUBAGENTS_SCHEDULE";

export const validScheduleName = (name: string) => /^[a-z0-9][a-z0-9-]{0,62}$/.test(name);

export function scheduleNameProblem(name: string): string | null {
  if (validScheduleName(name)) return null;
  return `schedule name "${name}" must be 1–63 lowercase letters, digits and "-" (not starting with "-")`;
}
