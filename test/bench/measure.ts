// The bench's measures: a piece of work timed from a collected heap (wall, and CPU where the
// machine is shared), the median and mean of runs, units.
export const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
export const ms = (n: number) => `${n.toFixed(1)} ms`;
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const time = (f: () => unknown) => {
  globalThis.gc?.();
  const t = performance.now();
  f();
  return performance.now() - t;
};
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Wall and CPU milliseconds of `f` from a collected heap: CPU is every thread's of the process
 * (the GC's helpers too), the number that holds on a machine other work shares. */
export const timed = (f: () => unknown) => {
  globalThis.gc?.();
  const c = process.cpuUsage();
  const t = performance.now();
  f();
  const wall = performance.now() - t;
  const d = process.cpuUsage(c);
  return { wall, cpu: (d.user + d.system) / 1000 };
};
