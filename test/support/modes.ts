// Every dataplane mode's code, for tests that build an Analysis (or diagnose) directly, without
// a command's load stage: imported statically here, as only a test may (src loads each lazily).
import { DataplaneCode } from '../../src/core/dataplane/modes.js';
import * as cilium from '../../src/core/dataplane/cilium/dataplane.js';
import * as ipvs from '../../src/core/dataplane/ipvs/dataplane.js';
import * as nftables from '../../src/core/dataplane/nftables/dataplane.js';

export const allModes = new DataplaneCode({ nftables, ipvs, cilium });
