import recorded from "./conversation-v3.json";
import { upgradeSuite } from "./upgrade-suite";

// Version 4 renumbered the listing, so a token from version 3 must list again.
upgradeSuite(3, recorded, false);
