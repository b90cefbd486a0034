// nft's JSON cut in its first bytes (json.c prints `{"nftables": [` before any item): named as an
// nft -j listing cut before its first table, wherever the cut falls in the wrapper's key; JSON
// that is whole and not nft's, or too short to tell, is not called so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const said = (text: string) => {
  try {
    readPaste(text, { file: 'p.json' });
  } catch (e) {
    return (e as Error).message;
  }
  return 'read';
};

const CUT = /the nft -j listing is cut at byte \d+ \(line \d+, inside its JSON\), before any table/;

describe('nft -j JSON cut in its first bytes', () => {
  const wrapper = '{"nftables": [';
  for (let n = 4; n <= wrapper.length; n++)
    it(`cut after ${JSON.stringify(wrapper.slice(0, n))}: a cut nft -j listing`, () =>
      assert.match(said(wrapper.slice(0, n)), CUT));

  it("jq's pretty-printed wrapper after the command typed: cut on its third line", () =>
    assert.match(said('$ nft -j list table ip kube-proxy | jq\n{\n  "nftables": [\n'), CUT));

  it('too short to tell, or whole JSON of something else: not called cut nft JSON', () => {
    for (const text of ['{"n', '{"name": "x"}', '{"nftables": {"foo": 1}}'])
      assert.doesNotMatch(said(text), CUT, text);
  });
});
