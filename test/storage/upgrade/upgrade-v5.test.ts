import recorded from "./conversation-v5.json";
import { upgradeSuite } from "./upgrade-suite";

upgradeSuite(5, recorded, true);
