import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KEYMAP,
  SCREENS,
  completeCommand,
  helpSections,
  keyName,
  lookup,
  parseCommand,
  splitKeys,
  type KeyFlags,
  type Where,
} from '../../src/tui/keymap.js';
import { MARK } from '../../src/output/marks.js';
import { readFileSync } from 'node:fs';
import { helpLines } from '../../src/tui/screens/Help.js';

describe('key names', () => {
  const cases: [string, KeyFlags, string][] = [
    // Ink's input and flags, the name the table uses
    ['j', {}, 'j'],
    ['G', { shift: true }, 'G'],
    ['', { downArrow: true }, 'down'],
    ['', { upArrow: true }, 'up'],
    ['', { return: true }, 'enter'],
    ['', { escape: true }, 'esc'],
    ['', { tab: true }, 'tab'],
    ['', { tab: true, shift: true }, 'shift+tab'],
    ['', { backspace: true }, 'backspace'],
    ['', { delete: true }, 'backspace'],
    ['r', { ctrl: true }, 'ctrl+r'],
    ['', { pageDown: true }, 'pgdn'],
    [' ', {}, 'space'],
    ['/', {}, '/'],
  ];
  for (const [input, key, name] of cases) {
    it(`${JSON.stringify(input)} ${JSON.stringify(key)} is ${name}`, () =>
      assert.equal(keyName(input, key), name));
  }

  it('splits keys that arrived in one read', () => {
    assert.deepEqual(
      splitKeys('jj\r\x1b\x12').map((k) => keyName(k.input, k.key)),
      ['j', 'j', 'enter', 'esc', 'ctrl+r'],
    );
  });
});

describe('the keymap', () => {
  const cases: [Where, string, string | undefined][] = [
    // where, key, action
    ['diag', 'j', 'down'],
    ['rules', 'down', 'down'],
    ['drift', 'k', 'up'],
    ['diag', 'enter', 'drill'],
    ['rules', 'enter', 'drill'],
    ['rules', 'r', 'raw'],
    ['diag', 'r', undefined],
    ['rules', 'n', 'nextNode'],
    ['trace', 'tab', 'nextPane'],
    ['trace', 'esc', 'back'],
    ['diag', '/', 'search'],
    ['diag', ':', 'command'],
    ['diag', '?', 'help'],
    ['diag', 'ctrl+r', 'recollect'],
    ['diag', 'q', 'quit'],
    // typing in the search box types: j and q are letters there
    ['search', 'j', undefined],
    ['search', 'q', undefined],
    ['search', 'down', 'down'],
    ['search', 'enter', 'accept'],
    ['search', 'esc', 'cancel'],
    ['search', 'ctrl+c', 'quit'],
    ['command', 'tab', 'complete'],
    ['command', 'backspace', 'erase'],
    ['help', 'q', 'cancel'],
    ['help', 'j', 'down'],
  ];
  for (const [where, key, action] of cases) {
    it(`${key} on ${where}: ${action ?? 'nothing'}`, () =>
      assert.equal(lookup(where, key)?.action, action));
  }

  it('has no key bound twice in one place', () => {
    const wheres: Where[] = ['all', 'search', 'command', 'help', ...SCREENS.map((s) => s.name)];
    for (const where of wheres) {
      const keys = KEYMAP.filter((b) => b.screens.includes(where)).flatMap((b) => b.keys);
      assert.deepEqual(
        keys.filter((k, i) => keys.indexOf(k) !== i),
        [],
        `${where} binds a key twice`,
      );
    }
  });

  it('writes the help from the table: every binding is in it', () => {
    const rows = helpSections().flatMap((s) => s.rows);
    for (const b of KEYMAP.filter((b) => !b.screens.every((w) => w === 'help'))) {
      assert.ok(
        rows.some((r) => r.keys === b.keys.join(' ') && r.description === b.description),
        `${b.keys.join(' ')} missing from help`,
      );
    }
    for (const s of SCREENS)
      assert.ok(
        rows.some((r) => r.keys === `:${s.command}`),
        s.command,
      );
  });

  it("says every status mark's meaning, and the Rules and Drift screens' marks", () => {
    const lines = helpLines();
    const meaning = (keys: string) => lines.find((l) => l.keys === keys)?.description;
    for (const [status, mark] of Object.entries(MARK))
      assert.ok(meaning(mark), `${status} (${mark}) has no meaning in the help`);
    assert.match(meaning('◐')!, /not observed everywhere/);
    assert.match(meaning('! orphan')!, /no entry point reaches/);
    assert.match(meaning('+')!, /not expected/);
    // every mark the Rules screen draws: the words it writes in a tone of their own
    const drawn = readFileSync(new URL('../../src/tui/screens/Rules.tsx', import.meta.url), 'utf8');
    const marks = [...drawn.matchAll(/<S tone="(?:warn|ok|muted)">([^<{]+)<\/S>/g)]
      .map((m) => m[1]!.trim())
      .filter((m) => /^(?:!|hairpin|not in (?:paste|dump)|local only|no endpoints)/.test(m));
    assert.ok(marks.length >= 8, marks.join(' | '));
    for (const mark of marks)
      assert.ok(meaning(mark), `the Rules mark "${mark}" is not in the help`);
  });
});

describe('the command line', () => {
  const cases: [string, ReturnType<typeof parseCommand>][] = [
    ['rules', { kind: 'screen', screen: 'rules' }],
    [':drift', { kind: 'screen', screen: 'drift' }],
    ['trace', { kind: 'screen', screen: 'trace' }],
    ['diag', { kind: 'screen', screen: 'diag' }],
    ['Diagnosis', { kind: 'screen', screen: 'diag' }],
    ['q', { kind: 'quit' }],
    ['help', { kind: 'help' }],
    ['nope', undefined],
    // unique prefixes, as k9s takes them
    ['r', { kind: 'screen', screen: 'rules' }],
    ['dri', { kind: 'screen', screen: 'drift' }],
    ['h', { kind: 'help' }],
    ['qu', { kind: 'quit' }],
    ['d', undefined], // diag or drift
    ['t', undefined], // trace or tree (rules)
  ];
  for (const [text, command] of cases) {
    it(`:${text}`, () => assert.deepEqual(parseCommand(text), command));
  }

  it('completes a name only one command starts with', () => {
    assert.equal(completeCommand('dr'), 'drift');
    assert.equal(completeCommand('tra'), 'trace');
    assert.equal(completeCommand('r'), 'rules'); // rules and its alias rule: one screen
    assert.equal(completeCommand('tr'), 'tr'); // trace, tree
    assert.equal(completeCommand('d'), 'd'); // diag, diagnosis, drift
    assert.equal(completeCommand('dia'), 'diag');
    assert.equal(completeCommand(''), '');
  });
});
