// iptables-nft's "... is incompatible, use 'nft' tool" (nft_assert_table_compatible's error) for a
// table or chain nft wrote directly, on its own or quoted in the log of whoever ran iptables: no
// rule of the node is in the paste, and `nft list ruleset` lists what is there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoRulesError, parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const CHAIN =
  "iptables v1.8.10 (nf_tables): chain `INPUT' in table `filter' is incompatible, use 'nft' tool.";

describe("iptables-nft's refusal of a table nft wrote", () => {
  const cases: [string, string][] = [
    ['after the command typed', `$ sudo iptables -t filter -S INPUT\n${CHAIN}\n`],
    [
      'of a whole table, by iptables-save',
      "iptables-save v1.8.4 (nf_tables): table `nat' is incompatible, use 'nft' tool.\n",
    ],
    [
      "quoted in a k3s journal's panic, among its goroutine lines",
      `Dec 05 08:05:15 abc k3s[10542]: panic: F1205 08:05:15.257193   10542 network_policy_controller.go:413] failed to list rules in filter table INPUT chain due to running [/usr/sbin/iptables -t filter -S INPUT --wait]: exit status 1: ${CHAIN}\n` +
        'Dec 05 08:05:15 abc k3s[10542]: goroutine 58811 [running]:\n' +
        'Dec 05 08:05:15 abc k3s[10542]: k8s.io/klog/v2.(*loggingT).printf(...)\n',
    ],
  ];
  for (const [name, text] of cases)
    it(`${name}: named, with nft list ruleset to run`, () => {
      assert.throws(
        () => parseIptables(text, { file: 'p.txt' }),
        (e: unknown) =>
          e instanceof NoRulesError &&
          e.foreign === 'iptables-nft-incompatible' &&
          /^p\.txt: this is iptables-nft's error .*nft wrote to it directly.*run `nft list ruleset`/.test(
            e.message,
          ),
      );
    });
});
