// The flags that say how to reach nodes, turned into transport options; bad values refused with
// the flag's name (the CLI exits 2 with the message).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeAccessOptions, type NodeAccessFlags } from '../../src/cluster/nodes/flags.js';

describe('node access flags', () => {
  it('turns the flags into options for each way', () => {
    assert.deepEqual(
      nodeAccessOptions(
        {
          via: 'pod',
          yes: true,
          image: 'registry.example/tools@sha256:' + 'a'.repeat(64),
          debugNamespace: 'kdebug',
          nodeTimeout: '20',
          sshUser: 'admin',
          sshKey: '/keys/id',
          sshAddressType: 'ExternalIP',
        },
        { SSH_AUTH_SOCK: '/run/agent' },
      ),
      {
        via: 'pod',
        timeoutMs: 20_000,
        ssh: {
          user: 'admin',
          identityFile: '/keys/id',
          agentSocket: '/run/agent',
          addressType: 'ExternalIP',
        },
        pod: {
          namespace: 'kdebug',
          image: 'registry.example/tools@sha256:' + 'a'.repeat(64),
          yes: true,
        },
      },
    );
    assert.deepEqual(nodeAccessOptions({}, {}), { via: 'auto', ssh: {}, pod: { yes: false } });
  });

  const bad: [string, NodeAccessFlags, RegExp][] = [
    [
      'a timeout that is not seconds',
      { nodeTimeout: 'soon' },
      /^--node-timeout soon: give seconds/,
    ],
    ['a timeout of zero', { nodeTimeout: '0' }, /^--node-timeout 0: give seconds/],
    [
      'an image with a space',
      { image: 'busybox; reboot' },
      /^--image "busybox; reboot" is not an image reference$/,
    ],
    [
      'a namespace with capitals',
      { debugNamespace: 'Kube-System' },
      /^--debug-namespace Kube-System is not a namespace name$/,
    ],
    ['a bad SSH timeout', { sshTimeout: '-1' }, /^--ssh-timeout -1: give seconds/],
  ];
  for (const [name, flags, message] of bad)
    it(`refuses ${name}`, () =>
      assert.throws(() => nodeAccessOptions(flags, {}), { name: 'NodeFlagsError', message }));
});
