// The bench's measures: a piece of work timed from a collected heap, the median of runs, units.
export const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
export const ms = (n: number) => `${n.toFixed(1)} ms`;
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const time = (f: () => unknown) => {
  globalThis.gc?.();
  const t = performance.now();
  f();
  return performance.now() - t;
};
