// The bundled snapshots are read and copied by everyone who tries kdebug: none of them carries a
// kubeconfig (kube-proxy's ConfigMap mounts one beside its configuration; snapshot save drops it)
// or anything a kubeconfig authenticates with.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = 'snapshots';
const CREDENTIAL = /\b(token|client-key-data|client-certificate-data|password):\s*\S/;

interface Obj {
  kind?: string;
  metadata?: { namespace?: string; name?: string };
  data?: Record<string, string>;
}

describe('bundled snapshots', () => {
  for (const dir of readdirSync(ROOT, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    it(`${dir.name}: no kubeconfig and no credential in its objects`, () => {
      const text = readFileSync(join(ROOT, dir.name, 'objects.json'), 'utf8');
      const items = (JSON.parse(text) as { items: Obj[] }).items;
      for (const o of items.filter((x) => x.kind === 'ConfigMap')) {
        for (const [key, value] of Object.entries(o.data ?? {})) {
          const where = `${o.metadata?.namespace}/${o.metadata?.name} ${key}`;
          assert.ok(!/kubeconfig/i.test(key), `a kubeconfig in ConfigMap ${where}`);
          assert.ok(!/^kind:\s*Config\s*$/m.test(value), `a kubeconfig in ConfigMap ${where}`);
        }
      }
      assert.doesNotMatch(text, CREDENTIAL);
    });
  }
});
