// Every test file starts with the Platform API's contract installed (runtime/contract-facts.ts), as
// `svc serve` installs its registry's at start: unit tests call the runtime's leaf functions
// (problemBody, pageSizeOf, keyExpiresAt...) without creating an app. createApp installs its own
// registry's service again (a fixture's, say). vitest.config.ts setupFiles.
import { service } from '../../generated/registry.ts';
import { installContractFacts, installMigrationsFolder } from '../../runtime/contract-facts.ts';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';

installContractFacts(service);
// And its migration history, as startServer installs the registry's: openDatabase reads it.
installMigrationsFolder(MIGRATIONS_FOLDER);
