// The lines by which paste authors leave part of a listing out, other than bare dots: every
// reader's elision tests take each (src/core/dataplane/paste/elisions.ts is what reads them).
export const ELISION_FORMS = [
  '--- snip ---',
  '[snip]',
  '<omitted>',
  '<snipped>',
  '... omitted ...',
  '省略',
  '# --- snip ---',
  '... (200 more) ...',
  '--',
  '… (200 more) …',
  '[... 200 more ...]',
  '(...)',
  '... 40 more rows ...',
  '(output truncated)',
  '（省略）',
  '(省略)',
  '以下省略',
  '中略',
  '⋮',
];
