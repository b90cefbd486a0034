#!/usr/bin/env node
// kubectl asks `kubectl_complete-kdebug WORDS...` to complete `kubectl kdebug WORDS...`.
process.argv.splice(2, 0, '__complete');
await import('../dist/cli.js');
