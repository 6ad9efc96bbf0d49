import recorded from "./conversation-v6.json";
import { upgradeSuite } from "./upgrade-suite";

upgradeSuite(6, recorded, true);
