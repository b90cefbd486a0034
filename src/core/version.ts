// A release as a tag, a status line or build info names it: parsed here once, compared by its
// numbers everywhere (kube-proxy's and Cilium's alike).

/** "v1.34.2" is major 1, minor 34, patch 2; `text` is the release without its suffix. */
export interface Version {
  text: string;
  major: number;
  minor: number;
  /** Undefined where the version names none ("v1.34"). */
  patch?: number;
}

/** "v1.34.2", "1.31.2-eksbuild.3", "v1.32.4-gke.1200", "v1.18.0-rc.1": the release they name. */
export function parseVersion(s: string | undefined): Version | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[+-][0-9A-Za-z.+-]*)?$/.exec(s?.trim() ?? '');
  if (!m) return undefined;
  return {
    text: `v${m[1]}.${m[2]}${m[3] !== undefined ? `.${m[3]}` : ''}`,
    major: Number(m[1]),
    minor: Number(m[2]),
    ...(m[3] !== undefined ? { patch: Number(m[3]) } : {}),
  };
}

/** `v` is the release `[major, minor, patch]` or a later one (no patch counts as 0). */
export const atLeast = (
  v: Version,
  [major, minor, patch = 0]: readonly [number, number, number?],
): boolean =>
  v.major !== major
    ? v.major > major
    : v.minor !== minor
      ? v.minor > minor
      : (v.patch ?? 0) >= patch;
