// docs/BENCHMARKS.md holds dated sections written by hand (a bench's figures, what they mean, what changed) and one
// region that `npm run bench` (bench/all.ts) writes: its latest full run. Only that region is rewritten; a page
// without one gets it at its end, so no hand-written section is ever lost to a run.
export const RUN_START =
  "<!-- npm run bench (bench/all.ts) rewrites what is between this line and the end mark; the rest is by hand -->";
export const RUN_END = "<!-- end of npm run bench -->";

/** The page with its generated region replaced by `run` (added at the end when it has none). */
export function withLatestRun(page: string, run: string): string {
  const region = `${RUN_START}\n${run.trim()}\n${RUN_END}`;
  const start = page.indexOf(RUN_START);
  const end = page.indexOf(RUN_END);
  if (start >= 0 && end > start) return `${page.slice(0, start)}${region}${page.slice(end + RUN_END.length)}`;
  const head = page.trim() ? page.trimEnd() : "# Benchmarks";
  return `${head}\n\n${region}\n`;
}
