import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServiceRef } from '../../src/core/service-ref.js';

describe('the forms people type for a Service', () => {
  const cases: { typed: string; ref: ReturnType<typeof parseServiceRef> }[] = [
    { typed: 'web', ref: { name: 'web' } },
    { typed: 'shop/web', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'svc/web', ref: { name: 'web' } },
    { typed: 'service/web', ref: { name: 'web' } },
    { typed: 'services/web', ref: { name: 'web' } },
    { typed: 'web.shop', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc.cluster.local', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc.corp.example', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'svc', ref: { name: 'svc' } },
    { typed: 'a/b/c', ref: { error: '"a/b/c" is not NAME, NS/NAME or svc/NAME' } },
    {
      typed: 'web.shop.pod',
      ref: { error: '"web.shop.pod" is not a Service\'s DNS name (NAME.NS.svc.cluster.local)' },
    },
    { typed: 'shop/', ref: { error: '"shop/" names no Service' } },
  ];
  for (const c of cases) it(c.typed, () => assert.deepEqual(parseServiceRef(c.typed), c.ref));
});
