// `kdebug expect -o json` (and the MCP expect tool): the text expect prints, in a versioned
// document that says which node and mode it is for.
import type { SettingStated } from '../core/dataplane/cilium/agent/provenance.js';
import { schemaId } from './schema-id.js';

export const EXPECT_SCHEMA_VERSION = 1;

export const expectDoc = (
  text: string,
  about: {
    node?: string;
    mode?: string;
    /** A Cilium node's agent settings, each with where it was read (the header's, typed). */
    settings?: SettingStated[];
  } = {},
) => ({
  $schema: schemaId('expect', EXPECT_SCHEMA_VERSION),
  schemaVersion: EXPECT_SCHEMA_VERSION,
  ...about,
  text,
});
