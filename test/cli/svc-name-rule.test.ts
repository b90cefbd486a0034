// A name that is no Service name (a DNS-1035 label) is refused as usage (exit 2), one line naming
// the rule, before the snapshot is read: the API server holds no Service of such a name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

describe('svc NAME that is not a DNS-1035 label', () => {
  for (const name of ['nginx-svc;id', 'Nginx_Svc', 'default/-svc', 'a\u001bb'])
    it(`refuses ${JSON.stringify(name)} with one line, exit 2`, () => {
      // a snapshot path that does not exist: the refusal comes before any read
      const r = kdebug(['svc', name, '--snapshot', '/nonexistent/kdebug-snapshot']);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^kdebug: .* is not a Service name: a DNS-1035 label .*\n$/);
      assert.ok(!r.stderr.includes('\u001b'), 'no raw escape');
    });

  it('lets a name wrong only in case through to its did-you-mean', () => {
    const r = kdebug(['svc', 'NGINX-SVC', '--snapshot', 'snapshots/nginx-svc', '-o', 'text']);
    assert.match(r.stdout, /Did you mean\s+"nginx-svc"\?/);
  });

  it('still diagnoses a valid name, its NS/NAME and DNS forms', () => {
    for (const name of ['nginx-svc', 'default/nginx-svc', 'nginx-svc.default', 'svc/nginx-svc'])
      assert.equal(kdebug(['svc', name, '--snapshot', 'snapshots/nginx-svc']).code, 0, name);
  });
});
