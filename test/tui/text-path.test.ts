// Every string reaches the terminal through components/text.tsx (which sanitizes it): no other
// TUI file may draw text with Ink's own <Text>.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('../../src/tui/', import.meta.url).pathname;
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );

describe('the one way text is drawn', () => {
  it("no TUI file but components/text.tsx uses Ink's Text", () => {
    const offenders = files(root)
      .filter((f) => !f.endsWith('components/text.tsx'))
      .filter((f) =>
        /import\s*{[^}]*\bText\b[^}]*}\s*from\s*'ink'|<Text[\s>]/.test(readFileSync(f, 'utf8')),
      );
    assert.deepEqual(offenders, []);
  });
});
