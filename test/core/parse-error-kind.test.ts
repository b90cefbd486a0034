// A parse error names the kind of input the reader took it for, once, after FILE:LINE: one line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CiliumParseError } from '../../src/core/dataplane/cilium/read/listing.js';
import { IptablesParseError } from '../../src/core/dataplane/iptables/read/errors.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { IpvsParseError } from '../../src/core/dataplane/ipvs/read/listing.js';
import { NftParseError } from '../../src/core/dataplane/nftables/read/listing.js';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';

describe('parse errors name the kind of input', () => {
  it('iptables: FILE:LINE: read as iptables rules: why', () => {
    assert.throws(
      () =>
        parseIptables(
          '*nat\n:KUBE-SVC-X - [0:0]\n-A KUBE-SVC-X -m comment --comment "x\nCOMMIT\n',
          { file: 'e1.txt' },
        ),
      (e: unknown) =>
        e instanceof IptablesParseError &&
        /^e1\.txt:3: read as iptables rules: unterminated quoted string$/.test(e.headline) &&
        !e.headline.includes('\n'),
    );
    // a reason that names iptables already is not told it twice
    const named = new IptablesParseError('f', 2, '', 'not a line of iptables-save');
    assert.equal(named.headline, 'f:2: not a line of iptables-save');
  });

  it('nft: FILE:LINE: read as an nft listing: why', () => {
    assert.throws(
      () => parseNftText('table ip x {\ntable ip y {\n}\n}\n', 'e2.txt'),
      (e: unknown) =>
        e instanceof NftParseError && /^e2\.txt:2: read as an nft listing: /.test(e.message),
    );
    assert.equal(
      new NftParseError('f', 1, 'the nft listing holds no table').message,
      'f:1: the nft listing holds no table',
    );
  });

  it('ipvs: FILE:LINE: read as an ipvsadm or ipset listing: why', () => {
    assert.equal(
      new IpvsParseError('f', 3, "not a real server's address:port: x").message,
      "f:3: read as an ipvsadm or ipset listing: not a real server's address:port: x",
    );
  });

  it('Cilium: FILE[:LINE]: read as a Cilium agent listing: why', () => {
    assert.equal(
      new CiliumParseError('d', 2, 'not a line of the maps dump').message,
      'd:2: read as a Cilium agent listing: not a line of the maps dump',
    );
    assert.equal(
      new CiliumParseError('d', undefined, 'no SVC line').message,
      'd: read as a Cilium agent listing: no SVC line',
    );
  });
});
