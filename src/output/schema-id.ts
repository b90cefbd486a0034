// Where a JSON output's schema is: the package's schema/ directory, by output and schemaVersion,
// so `require.resolve(doc.$schema)` finds the file the installed kdebug ships.
export type SchemaName =
  'report' | 'rules' | 'rules-search' | 'expect' | 'drift' | 'trace' | 'version';

export const schemaId = (name: SchemaName, version: number): string =>
  `kdebug/schema/${name}.v${version}.json`;
